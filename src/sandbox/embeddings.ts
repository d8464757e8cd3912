// Embeddings (OpenAI's `/v1/embeddings`, Azure's deployment and v1 paths, the Gemini API's
// `:embedContent` and `:batchEmbedContents` with a key or on Vertex AI). A vector is a pure function
// of its text: a PRNG seeded by the text's hash, of the asked length, scaled to unit length and
// rounded to float32 (so its base64 form decodes to the very numbers of its float form). OpenAI's
// usage is the words of the inputs (a token array: its length); Gemini's API reports none.
import { createHash } from 'node:crypto';
import { azureRoute } from './azure.js';
import { geminiErrorForStatus } from './gemini.js';
import { hasBearer, openAiError, UNAUTHORIZED } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { isRecord, words } from './text.js';
import { validVertexToken } from './vertex-token.js';

const OPENAI_DIMENSIONS = 1536;
const GEMINI_DIMENSIONS = 768;
const MAX_DIMENSIONS = 3072;
const MAX_INPUTS = 2048;
const GEMINI_BATCH_LIMIT = 100;

/** The unit vector of `text`, `dimensions` long, each value a float32. */
export function embeddingVector(text: string, dimensions: number): number[] {
  let state = createHash('sha256').update(text).digest().readUInt32LE(0);
  // mulberry32: small, fast, and the same numbers on every platform
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const raw = Array.from({ length: dimensions }, () => next() * 2 - 1);
  let squares = 0;
  for (const value of raw) squares += value * value;
  const norm = Math.sqrt(squares);
  return raw.map((value) => Math.fround(value / norm));
}

/** The little-endian float32 bytes of a vector, in base64. */
export function vectorBase64(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  for (const [i, value] of values.entries()) bytes.writeFloatLE(value, i * 4);
  return bytes.toString('base64');
}

interface Embeddable {
  /** What seeds the vector: the text, or a token array written out. */
  seed: string;
  tokens: number;
}

const isTokenArray = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((id) => Number.isSafeInteger(id) && (id as number) >= 0);
const ofText = (text: string): Embeddable => ({ seed: text, tokens: words(text).length });
const ofTokens = (ids: number[]): Embeddable => ({ seed: `tokens:${ids.join(' ')}`, tokens: ids.length });

/** OpenAI's four forms of `input`, or why it is none of them. */
function openAiInputs(input: unknown): Embeddable[] | string {
  const invalid = "'$.input' is invalid: expected a non-empty string, or a non-empty array of non-empty strings, of token ids or of token-id arrays";
  if (typeof input === 'string') return input === '' ? invalid : [ofText(input)];
  if (!Array.isArray(input) || input.length === 0) return invalid;
  if (isTokenArray(input)) return input.length > MAX_INPUTS ? invalid : [ofTokens(input)];
  if (input.length > MAX_INPUTS) return `'$.input' is invalid: at most ${MAX_INPUTS} inputs`;
  if (input.every((item) => typeof item === 'string' && item !== '')) return (input as string[]).map(ofText);
  if (input.every(isTokenArray)) return (input as number[][]).map(ofTokens);
  return invalid;
}

function dimensionsOf(value: unknown, fallback: number, field: string): number | string {
  if (value === undefined || value === null) return fallback;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_DIMENSIONS)
    return `${field}: expected an integer from 1 to ${MAX_DIMENSIONS}`;
  return value as number;
}

function answerOpenAi(ctx: SandboxContext): void {
  const refuse = (message: string) => ctx.reply.json(400, openAiError(message, 'invalid_request_error'));
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const body = ctx.body;
  if (!isRecord(body)) return refuse('expected a JSON object body');
  if (typeof body.model !== 'string' || body.model === '') return refuse('you must provide a model parameter');
  const inputs = openAiInputs(body.input);
  if (typeof inputs === 'string') return refuse(inputs);
  const dimensions = dimensionsOf(body.dimensions, OPENAI_DIMENSIONS, 'dimensions');
  if (typeof dimensions === 'string') return refuse(dimensions);
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') return refuse("encoding_format: expected 'float' or 'base64'");
  const data = inputs.map((input, index) => {
    const vector = embeddingVector(input.seed, dimensions);
    return { object: 'embedding', index, embedding: format === 'base64' ? vectorBase64(vector) : vector };
  });
  const tokens = inputs.reduce((sum, input) => sum + input.tokens, 0);
  ctx.reply.json(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

export const embeddingsRoute: SandboxRoute = { kind: 'embeddings', method: 'POST', path: '/v1/embeddings', handle: answerOpenAi };

/** Azure OpenAI's deployment path (the deployment names the model) and its v1 path; fault kind `azure`. */
export const azureEmbeddingsRoutes: SandboxRoute[] = [
  azureRoute(embeddingsRoute, '/openai/deployments/:deployment/embeddings'),
  azureRoute(embeddingsRoute, '/openai/v1/embeddings'),
];

const GEMINI_VERBS = new Set(['embedContent', 'batchEmbedContents']);

/** A Gemini content's text: its parts' texts, joined. */
function contentText(content: unknown): string | undefined {
  if (!isRecord(content) || !Array.isArray(content.parts)) return undefined;
  const texts = content.parts.flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : []));
  return texts.length === 0 ? undefined : texts.join(' ');
}

/** One embedContent request's vector, or why it has none. */
function geminiEmbedding(request: unknown, where: string): { values: number[] } | string {
  if (!isRecord(request)) return `${where}: expected an object`;
  const text = contentText(request.content);
  if (text === undefined) return `${where}.content: expected parts with text`;
  const dimensions = dimensionsOf(request.outputDimensionality, GEMINI_DIMENSIONS, `${where}.outputDimensionality`);
  if (typeof dimensions === 'string') return dimensions;
  return { values: embeddingVector(text, dimensions) };
}

function answerGeminiEmbeddings(ctx: SandboxContext, vertex: boolean, model: string, verb: string): void {
  const resource = vertex ? `projects/${ctx.params.project}/locations/${ctx.params.region}/publishers/google/models/${model}` : `models/${model}`;
  const refuse = (status: number, message: string) => ctx.reply.json(status, geminiErrorForStatus(status, message));
  if (vertex ? !validVertexToken(ctx.headers.authorization) : !(ctx.headers['x-goog-api-key'] || ctx.query.get('key'))) {
    return refuse(401, vertex ? 'Request had invalid authentication credentials: expected an OAuth 2 access token' : 'API key not valid');
  }
  if (verb === 'embedContent') {
    const embedding = geminiEmbedding(ctx.body, 'EmbedContentRequest');
    return typeof embedding === 'string' ? refuse(400, embedding) : ctx.reply.json(200, { embedding });
  }
  const requests = isRecord(ctx.body) ? ctx.body.requests : undefined;
  if (!Array.isArray(requests) || requests.length === 0) return refuse(400, 'BatchEmbedContentsRequest.requests: expected a non-empty array');
  if (requests.length > GEMINI_BATCH_LIMIT)
    return refuse(400, `BatchEmbedContentsRequest.requests: at most ${GEMINI_BATCH_LIMIT} requests can be in one batch`);
  const embeddings = [];
  for (const [i, request] of requests.entries()) {
    const where = `BatchEmbedContentsRequest.requests[${i}]`;
    if (isRecord(request) && request.model !== resource) return refuse(400, `${where}.model: expected ${resource}, the model of the call`);
    const embedding = geminiEmbedding(request, where);
    if (typeof embedding === 'string') return refuse(400, embedding);
    embeddings.push(embedding);
  }
  ctx.reply.json(200, { embeddings });
}

/**
 * A Gemini route that answers the embedding verbs too (fault kind `gemini`, as its other verbs; the
 * model of the path selects embeddings). Gemini's paths put every verb in one segment.
 */
export function withGeminiEmbeddings(route: SandboxRoute): SandboxRoute {
  const vertex = route.path.startsWith('/v1/projects/');
  return {
    ...route,
    handle(ctx) {
      const call = ctx.params.call ?? '';
      const colon = call.lastIndexOf(':');
      const verb = call.slice(colon + 1);
      if (colon <= 0 || !GEMINI_VERBS.has(verb)) return route.handle(ctx);
      return answerGeminiEmbeddings(ctx, vertex, call.slice(0, colon), verb);
    },
  };
}
