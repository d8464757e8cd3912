// The Gemini API (provider-formats.md, Gemini API and Vertex AI): generateContent, its stream (SSE
// with `?alt=sse`, else one JSON array) and countTokens, with a key at /v1beta and with an OAuth token
// (from vertex-token.ts) at Vertex AI's publisher-model path. Answered by the rules in text.ts, so
// the conversation a chat call would carry gets the same text and the same token counts here.
import { mapChunks, midStreamErrorMessage, SSE_HEADERS } from './reply.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import {
  hashOf,
  isRecord,
  MAX_REPLY_WORDS,
  type PlannedReply,
  planReply,
  requestedWords,
  type ToolChoice,
  type UsageDirectives,
  usageDirectives,
  wordPieces,
  words,
} from './text.js';
import { validVertexToken } from './vertex-token.js';

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Gemini's error body, with the status name its API gives that code. */
export function geminiErrorForStatus(status: number, message: string) {
  return { error: { code: status, message, status: STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT') } };
}

interface GeminiRequest {
  contents: Record<string, unknown>[];
  system: unknown;
  toolNames: string[];
  toolChoice: ToolChoice;
  maxTokens: number | undefined;
  stopSequences: string[];
}

type Verb = 'generateContent' | 'streamGenerateContent' | 'countTokens';

const route = (path: string, vertex: boolean): SandboxRoute => ({
  kind: 'gemini',
  method: 'POST',
  path,
  errorBody: geminiErrorForStatus,
  modelOf: (params) => params.call?.slice(0, params.call.lastIndexOf(':')),
  handle: (ctx) => answerGemini(ctx, vertex),
});

export const geminiRoutes: SandboxRoute[] = [
  route('/v1beta/models/:call', false),
  route('/v1/projects/:project/locations/:region/publishers/google/models/:call', true),
];

async function answerGemini(ctx: SandboxContext, vertex: boolean): Promise<void> {
  const refuse = (status: number, message: string) => ctx.reply.json(status, geminiErrorForStatus(status, message));
  if (vertex ? !validVertexToken(ctx.headers.authorization) : !(ctx.headers['x-goog-api-key'] || ctx.query.get('key'))) {
    return refuse(401, vertex ? 'Request had invalid authentication credentials: expected an OAuth 2 access token' : 'API key not valid');
  }
  const colon = ctx.params.call!.lastIndexOf(':');
  const model = ctx.params.call!.slice(0, colon);
  const verb = ctx.params.call!.slice(colon + 1) as Verb;
  if (colon <= 0 || !['generateContent', 'streamGenerateContent', 'countTokens'].includes(verb)) return refuse(404, `no method ${ctx.params.call}`);
  const request = parseRequest(ctx.body);
  if (typeof request === 'string') return refuse(400, request);
  if (verb === 'countTokens') return ctx.reply.json(200, { totalTokens: inputTokens(request) });
  const userText = lastUserText(request.contents);
  if ((requestedWords(userText) ?? 0) > MAX_REPLY_WORDS) return refuse(400, `[[words:N]]: N must be at most ${MAX_REPLY_WORDS}`);
  const plan = planReply({
    userText,
    toolNames: request.toolNames,
    maxTokens: request.maxTokens,
    stopSequences: request.stopSequences,
    toolChoice: request.toolChoice,
  });
  const usage = usageMetadata(inputTokens(request), plan.outputTokens, usageDirectives(userText));
  const base = { modelVersion: model, responseId: hashOf(ctx.body) };
  if (verb === 'generateContent') return ctx.reply.json(200, { candidates: [candidate(plan, partsOf(plan), true)], usageMetadata: usage, ...base });

  const chunks = [...pieces(plan).map((parts) => ({ candidates: [candidate(plan, parts, false)], ...base }))];
  // the last chunk carries the finish reason and the usage, as Gemini's does
  chunks.push({ candidates: [candidate(plan, [{ text: '' }], true)], usageMetadata: usage, ...base } as (typeof chunks)[number]);
  const sse = ctx.query.get('alt') === 'sse';
  const error = (sent: number) => JSON.stringify(geminiErrorForStatus(500, midStreamErrorMessage(sent)));
  await ctx.reply.stream({
    headers: sse ? SSE_HEADERS : { 'content-type': 'application/json' },
    chunks: sse ? mapChunks(chunks, (chunk) => `data: ${JSON.stringify(chunk)}\n\n`) : arrayChunks(chunks),
    errorChunk: sse ? (sent) => `data: ${error(sent)}\n\n` : (sent) => `${sent === 0 ? '[' : ',\r\n'}${error(sent)}]`,
  });
}

/**
 * Gemini's usageMetadata. Cached reads are part of promptTokenCount, thoughts are beside the candidates
 * (each field only when non-zero, as Gemini leaves them out); it has no field for cache writes or searches.
 */
function usageMetadata(prompt: number, output: number, extra: UsageDirectives | undefined) {
  const cached = extra?.cached ?? 0;
  const thoughts = extra?.reasoning ?? 0;
  return {
    promptTokenCount: prompt + cached,
    candidatesTokenCount: output,
    totalTokenCount: prompt + cached + output + thoughts,
    ...(cached > 0 && { cachedContentTokenCount: cached }),
    ...(thoughts > 0 && { thoughtsTokenCount: thoughts }),
  };
}

/** The JSON array, element by element: the closing bracket is the stream's last chunk. */
function* arrayChunks(chunks: unknown[]): Generator<string> {
  for (const [i, chunk] of chunks.entries()) yield `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(chunk)}\n`;
  yield ']';
}

function candidate(plan: PlannedReply, parts: unknown[], last: boolean) {
  const finish = plan.type === 'text' && plan.truncated ? 'MAX_TOKENS' : 'STOP';
  return { content: { role: 'model', parts }, index: 0, ...(last && { finishReason: finish }) };
}

function partsOf(plan: PlannedReply): unknown[] {
  if (plan.type === 'tool') return [{ functionCall: { name: plan.name, args: JSON.parse(plan.arguments) } }];
  return [{ text: plan.words.join(' ') }];
}

/** A word per chunk; a function call whole in one, as Gemini streams them. */
function pieces(plan: PlannedReply): unknown[][] {
  if (plan.type === 'tool') return [partsOf(plan)];
  return wordPieces(plan.words.join(' ')).map((text) => [{ text }]);
}

function parseRequest(body: unknown): GeminiRequest | string {
  if (!isRecord(body)) return 'body: expected a JSON object';
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0 || !contents.every(isRecord)) return 'contents: required, a non-empty array of objects';
  const bad = contents.findIndex((c) => c.role !== undefined && c.role !== 'user' && c.role !== 'model');
  if (bad >= 0) return `contents[${bad}].role: expected "user" or "model"`;
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  const stops = config.stopSequences ?? [];
  if (!Array.isArray(stops) || !stops.every((s) => typeof s === 'string')) return 'generationConfig.stopSequences: expected an array of strings';
  const toolNames = (Array.isArray(body.tools) ? body.tools : []).flatMap((tool) =>
    isRecord(tool) && Array.isArray(tool.functionDeclarations)
      ? tool.functionDeclarations.flatMap((d) => (isRecord(d) && typeof d.name === 'string' ? [d.name] : []))
      : [],
  );
  const calling = isRecord(body.toolConfig) && isRecord(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : {};
  const allowed = Array.isArray(calling.allowedFunctionNames) ? (calling.allowedFunctionNames as string[]) : toolNames;
  const toolChoice: ToolChoice = calling.mode === 'NONE' ? { none: true } : calling.mode === 'ANY' && allowed[0] !== undefined ? { forced: allowed[0] } : {};
  const maxTokens = typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : undefined;
  return { contents, system: body.systemInstruction, toolNames, toolChoice, maxTokens, stopSequences: stops as string[] };
}

/** The chat rule (text.ts `promptTokens`): 1 per content plus its words, and the system instruction is one more. */
function inputTokens({ system, contents }: GeminiRequest): number {
  const systemTokens = system === undefined ? 0 : 1 + words(partsText(isRecord(system) ? system.parts : [{ text: system }])).length;
  return contents.reduce((sum, content) => sum + 1 + words(partsText(content.parts)).length, systemTokens);
}

/** The words a content's parts carry: text, function call arguments (as chat's `arguments`) and function results. */
function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .map((part) => {
      if (!isRecord(part)) return '';
      if (typeof part.text === 'string' && part.thought !== true) return part.text;
      if (isRecord(part.functionCall)) return JSON.stringify(part.functionCall.args ?? {});
      if (isRecord(part.functionResponse)) {
        const response = part.functionResponse.response;
        return isRecord(response) && typeof response.content === 'string' ? response.content : JSON.stringify(response ?? {});
      }
      return '';
    })
    .join(' ');
}

/** The last user turn's text, skipping turns made only of function results (chat's `tool` messages). */
function lastUserText(contents: Record<string, unknown>[]): string {
  for (let i = contents.length - 1; i >= 0; i--) {
    const content = contents[i]!;
    if (content.role === 'model') continue;
    const parts = Array.isArray(content.parts) ? content.parts : [];
    if (parts.length > 0 && parts.every((part) => isRecord(part) && isRecord(part.functionResponse))) continue;
    return parts.flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : [])).join(' ');
  }
  return '';
}
