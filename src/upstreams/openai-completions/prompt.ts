// The four forms of a completion's `prompt`, checked before the schema (whose union of them could
// only say "must match a schema in anyOf"), and how many prompts a request carries.
import { invalidRequest } from '../../errors.js';
import type { CompletionPrompt, CompletionRequest } from './types.js';

const isTokenIds = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((id) => Number.isSafeInteger(id) && (id as number) >= 0);

/** Throws a 400 naming `prompt` (or the element at fault) unless it is one of OpenAI's four forms. */
export function requireCompletionPrompt(prompt: unknown): asserts prompt is CompletionPrompt {
  if (typeof prompt === 'string') return;
  const forms = 'expected a string, an array of strings, an array of token ids or an array of token-id arrays';
  if (prompt === undefined || prompt === null) throw invalidRequest(`prompt: required, ${forms}`);
  if (!Array.isArray(prompt) || prompt.length === 0) throw invalidRequest(`prompt: ${forms}`);
  if (isTokenIds(prompt)) return;
  const first = prompt[0];
  const bad = typeof first === 'string' ? prompt.findIndex((item) => typeof item !== 'string') : prompt.findIndex((item) => !isTokenIds(item));
  if (bad !== -1) throw invalidRequest(`prompt[${bad}]: ${forms}, not a mix`);
}

/** Prompts in the request: one for a string or a token-id array, else one per element. */
export function promptCount(prompt: CompletionPrompt): number {
  if (typeof prompt === 'string' || prompt.length === 0 || typeof prompt[0] === 'number') return 1;
  return prompt.length;
}

/** Completions the upstream makes: `best_of` (or `n`) per prompt, each up to the output cap. */
export function choicesMade(body: CompletionRequest): number {
  return promptCount(body.prompt) * Math.max(body.n ?? 1, body.best_of ?? 1);
}
