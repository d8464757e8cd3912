// OpenAI's embeddings request and answer, and the four forms its `input` takes: a string, an
// array of strings, an array of token ids, or an array of token-id arrays. The checks refuse what
// OpenAI refuses (an empty string or array, more than 2048 inputs), each naming the field.
import { invalidRequest } from '../../errors.js';

/** The most inputs (or token ids in one token array) a request may carry, as OpenAI allows. */
export const MAX_EMBEDDING_INPUTS = 2048;

export type EmbeddingInput = string | string[] | number[] | number[][];

export interface EmbeddingsRequest {
  model: string;
  input: EmbeddingInput;
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [field: string]: unknown;
}

export interface EmbeddingsAnswer {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** The inputs one by one: texts, or token-id arrays. */
export type EmbeddingInputs = { kind: 'texts'; texts: string[] } | { kind: 'tokens'; ids: number[][] };

const FORMS = 'must be a string, or an array of strings, of token ids or of token-id arrays';
const isTokenId = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;

/** A token-id array's first fault (`where` names it), or undefined. */
function tokenArrayFault(ids: unknown[], where: string): string | undefined {
  if (ids.length === 0) return `${where}: must not be an empty array`;
  if (ids.length > MAX_EMBEDDING_INPUTS) return `${where}: at most ${MAX_EMBEDDING_INPUTS} token ids, got ${ids.length}`;
  const bad = ids.findIndex((id) => !isTokenId(id));
  return bad === -1 ? undefined : `${where}[${bad}]: a token id must be a non-negative integer`;
}

/** Why `input` is not one of the four forms, or undefined when it is (the schema checks the rest of the body). */
export function embeddingInputFault(input: unknown): string | undefined {
  if (input === undefined) return undefined; // the schema's own "input field is required"
  if (typeof input === 'string') return input === '' ? 'input: must not be an empty string' : undefined;
  if (!Array.isArray(input)) return `input: ${FORMS}`;
  if (input.length === 0) return 'input: must not be an empty array';
  const first = input[0];
  if (typeof first === 'number') return tokenArrayFault(input, 'input');
  if (input.length > MAX_EMBEDDING_INPUTS) return `input: at most ${MAX_EMBEDDING_INPUTS} inputs, got ${input.length}`;
  for (const [i, item] of input.entries()) {
    const where = `input[${i}]`;
    if (typeof first === 'string') {
      if (typeof item !== 'string') return `${where}: expected a string, as input[0] is (one form per array)`;
      if (item === '') return `${where}: must not be an empty string`;
    } else if (Array.isArray(first)) {
      if (!Array.isArray(item)) return `${where}: expected an array of token ids, as input[0] is (one form per array)`;
      const fault = tokenArrayFault(item, where);
      if (fault) return fault;
    } else return `input[0]: ${FORMS}`;
  }
  return undefined;
}

/** Throws the 400 for an input that is not one of the four forms. */
export function requireEmbeddingInput(input: unknown): void {
  const fault = embeddingInputFault(input);
  if (fault) throw invalidRequest(fault);
}

/** The inputs of a checked `input`, one by one. */
export function embeddingInputs(input: EmbeddingInput): EmbeddingInputs {
  if (typeof input === 'string') return { kind: 'texts', texts: [input] };
  if (typeof input[0] === 'number') return { kind: 'tokens', ids: [input as number[]] };
  if (typeof input[0] === 'string') return { kind: 'texts', texts: input as string[] };
  return { kind: 'tokens', ids: input as number[][] };
}
