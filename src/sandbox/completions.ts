// OpenAI's legacy completions (`POST /v1/completions`, and Azure's paths to it), answered by the rules
// in text.ts as chat is: each prompt's reply is `Sandbox says: <its words>` (or `[[words:N]]`), cut by
// `stop` and `max_tokens`; `n` choices per prompt. Usage: a prompt's words (a token array: its
// length), and the words of every choice. Streamed: one chunk per word, a last chunk per choice with
// its finish reason, the usage chunk when include_usage, then `[DONE]`; faults apply as to chat.
import { azureRoute } from './azure.js';
import { SANDBOX_CREATED } from './chat.js';
import { hasBearer, openAiError, openAiErrorForStatus, UNAUTHORIZED } from './openai-common.js';
import { mapChunks, midStreamErrorMessage, SSE_HEADERS, sseData } from './reply.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { hashOf, isRecord, MAX_REPLY_WORDS, planReply, requestedWords, wordPieces, words } from './text.js';

const MAX_CHOICES = 128;

interface Prompt {
  text: string;
  tokens: number;
}

interface CompletionsRequest {
  model: string;
  prompts: Prompt[];
  n: number;
  stream: boolean;
  includeUsage: boolean;
  echo: boolean;
  maxTokens: number | undefined;
  stopSequences: string[];
}

interface Choice {
  index: number;
  text: string;
  finishReason: 'stop' | 'length';
  outputTokens: number;
}

const isTokenIds = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((id) => Number.isSafeInteger(id) && (id as number) >= 0);
const ofText = (text: string): Prompt => ({ text, tokens: words(text).length });
const ofTokens = (ids: number[]): Prompt => ({ text: ids.map((id) => `t${id}`).join(' '), tokens: ids.length });

/** OpenAI's four forms of `prompt`, or why it is none of them. */
function promptsOf(prompt: unknown): Prompt[] | string {
  if (typeof prompt === 'string') return [ofText(prompt)];
  const invalid = 'prompt: expected a string, an array of strings, an array of token ids or an array of token-id arrays';
  if (!Array.isArray(prompt) || prompt.length === 0) return invalid;
  if (isTokenIds(prompt)) return [ofTokens(prompt)];
  if (prompt.every((item) => typeof item === 'string')) return (prompt as string[]).map(ofText);
  if (prompt.every(isTokenIds)) return (prompt as number[][]).map(ofTokens);
  return invalid;
}

function parseRequest(body: unknown): CompletionsRequest | string {
  if (!isRecord(body)) return 'body: expected a JSON object';
  const { model, prompt, n, stream, stream_options: options, stop, max_tokens: maxTokens, echo } = body;
  if (typeof model !== 'string' || model === '') return 'model: required, a non-empty string';
  const prompts = promptsOf(prompt);
  if (typeof prompts === 'string') return prompts;
  if (n !== undefined && n !== null && (!Number.isSafeInteger(n) || (n as number) < 1 || (n as number) > MAX_CHOICES)) {
    return `n: expected an integer from 1 to ${MAX_CHOICES}`;
  }
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') return 'stream: expected a boolean';
  if (maxTokens !== undefined && maxTokens !== null && (!Number.isSafeInteger(maxTokens) || (maxTokens as number) < 0)) {
    return 'max_tokens: expected a non-negative integer';
  }
  const stopSequences = stop === undefined || stop === null ? [] : typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(stopSequences) || !stopSequences.every((s) => typeof s === 'string')) return 'stop: expected a string or an array of strings';
  return {
    model,
    prompts,
    n: (n as number | undefined | null) ?? 1,
    stream: stream === true,
    includeUsage: isRecord(options) && options.include_usage === true,
    echo: echo === true,
    maxTokens: (maxTokens as number | undefined | null) ?? undefined,
    stopSequences,
  };
}

/** Every prompt's `n` choices, in OpenAI's order: the choices of the first prompt, then the next's. */
function choicesOf(request: CompletionsRequest): Choice[] {
  return request.prompts.flatMap((prompt, p) => {
    const plan = planReply({ userText: prompt.text, maxTokens: request.maxTokens, stopSequences: request.stopSequences });
    if (plan.type !== 'text') return [];
    const reply = plan.words.join(' ');
    const text = request.echo ? `${prompt.text}${reply === '' ? '' : ` ${reply}`}` : reply;
    const finishReason = plan.truncated ? ('length' as const) : ('stop' as const);
    return Array.from({ length: request.n }, (_, i) => ({ index: p * request.n + i, text, finishReason, outputTokens: plan.outputTokens }));
  });
}

export const completionsRoute: SandboxRoute = {
  kind: 'completions',
  method: 'POST',
  path: '/v1/completions',
  errorBody: openAiErrorForStatus,
  handle: answerCompletions,
};

/** Azure OpenAI's deployment and v1 paths to the same answers. */
export const azureCompletionsRoutes: SandboxRoute[] = [
  azureRoute(completionsRoute, '/openai/deployments/:deployment/completions'),
  azureRoute(completionsRoute, '/openai/v1/completions'),
];

async function answerCompletions(ctx: SandboxContext): Promise<void> {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const request = parseRequest(ctx.body);
  if (typeof request === 'string') return ctx.reply.json(400, openAiError(request, 'invalid_request_error'));
  if (request.prompts.some((prompt) => (requestedWords(prompt.text) ?? 0) > MAX_REPLY_WORDS)) {
    return ctx.reply.json(400, openAiError(`[[words:N]]: N must be at most ${MAX_REPLY_WORDS}`, 'invalid_request_error'));
  }
  const choices = choicesOf(request);
  const promptTokens = request.prompts.reduce((sum, prompt) => sum + prompt.tokens, 0);
  const completionTokens = choices.reduce((sum, choice) => sum + choice.outputTokens, 0);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const hash = hashOf(ctx.body);
  const base = { id: `cmpl-${hash}`, object: 'text_completion', created: SANDBOX_CREATED, model: request.model };
  const headers = { 'x-request-id': `req_${hash}` };
  if (!request.stream) {
    const answered = choices.map((c) => ({ text: c.text, index: c.index, logprobs: null, finish_reason: c.finishReason }));
    return ctx.reply.json(200, { ...base, choices: answered, usage }, headers);
  }
  await ctx.reply.stream({
    headers: { ...SSE_HEADERS, ...headers },
    chunks: mapChunks(completionChunks(base, choices, request.includeUsage ? usage : undefined), sseData),
    // as chat's: a data event whose object has a top-level `error`
    errorChunk: (sent) => sseData(openAiError(midStreamErrorMessage(sent), 'server_error')),
  });
}

/** The chunks of a streamed answer, made one at a time so a long reply is never held whole. */
function* completionChunks(base: object, choices: Choice[], usage: object | undefined) {
  // as OpenAI does: with include_usage every chunk says `usage: null` until the last one carries it
  const usageNull = usage ? { usage: null } : {};
  const chunk = (index: number, text: string, finish: string | null = null) => ({
    ...base,
    choices: [{ text, index, logprobs: null, finish_reason: finish }],
    ...usageNull,
  });
  for (const choice of choices) {
    for (const piece of wordPieces(choice.text)) yield chunk(choice.index, piece);
    yield chunk(choice.index, '', choice.finishReason);
  }
  if (usage) yield { ...base, choices: [], usage };
  yield '[DONE]';
}
