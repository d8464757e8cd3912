import { SANDBOX_CREATED } from './chat.js';
import { hasBearer, openAiError, openAiErrorForStatus, UNAUTHORIZED } from './openai-common.js';
import { mapChunks, midStreamErrorMessage, SSE_HEADERS, sseEvent } from './reply.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import {
  hashOf,
  isRecord,
  MAX_REPLY_WORDS,
  type PlannedReply,
  planReply,
  readToolChoice,
  requestedWords,
  type ToolChoice,
  usageDirectives,
  wordPieces,
  words,
} from './text.js';

// OpenAI Responses (chat-formats.md §4), answered by the rules in text.ts: the conversation a gateway
// would translate to chat completions gets the same text and the same token counts there.

interface ResponsesRequest {
  model: string;
  items: Record<string, unknown>[];
  instructions: string | null;
  maxOutputTokens: number | null;
  stream: boolean;
  tools: unknown[];
  toolNames: string[];
  toolChoice: ToolChoice;
}

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
}

interface Ids {
  response: string;
  message: string;
  functionCall: string;
  callId: string;
}

/** The content part types whose `text` a message item carries. */
const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);

export const responsesRoute: SandboxRoute = {
  kind: 'responses',
  method: 'POST',
  path: '/v1/responses',
  errorBody: openAiErrorForStatus,
  handle: answerResponses,
};

/** Under /noresponses: an OpenAI-compatible upstream that serves chat completions but not this API. */
export const noResponsesRoute: SandboxRoute = {
  ...responsesRoute,
  path: '/noresponses/v1/responses',
  handle: (ctx) => ctx.reply.json(404, openAiError(`Invalid URL (POST /v1/responses)`, 'invalid_request_error', 'not_found')),
};

async function answerResponses(ctx: SandboxContext): Promise<void> {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const request = parseResponsesRequest(ctx.body);
  if (typeof request === 'string') return ctx.reply.json(400, openAiError(request, 'invalid_request_error'));
  const userText = lastUserText(request.items);
  if ((requestedWords(userText) ?? 0) > MAX_REPLY_WORDS) {
    return ctx.reply.json(400, openAiError(`[[words:N]]: N must be at most ${MAX_REPLY_WORDS}`, 'invalid_request_error'));
  }
  const plan = planReply({ userText, toolNames: request.toolNames, maxTokens: request.maxOutputTokens ?? undefined, toolChoice: request.toolChoice });
  // usage directives: cached reads join input_tokens, reasoning output_tokens; no field here for cache writes or searches
  const { cached = 0, reasoning = 0 } = usageDirectives(userText) ?? {};
  const usage = {
    input_tokens: inputTokens(request) + cached,
    output_tokens: plan.outputTokens + reasoning,
    cached_tokens: cached,
    reasoning_tokens: reasoning,
  };
  const hash = hashOf(ctx.body);
  const ids = { response: `resp_${hash}`, message: `msg_${hash}`, functionCall: `fc_${hash}`, callId: `call_${hash}` };
  const headers = { 'x-request-id': `req_${hash}` };
  if (!request.stream) return ctx.reply.json(200, finalResponse(request, plan, usage, ids), headers);

  await ctx.reply.stream({
    headers: { ...SSE_HEADERS, ...headers },
    chunks: mapChunks(responseEvents(request, plan, usage, ids), (event) => sseEvent(event.type, event)),
    errorChunk: (sent) => failureEvents(request, ids, sent),
  });
}

function parseResponsesRequest(body: unknown): ResponsesRequest | string {
  if (!isRecord(body)) return 'body: expected a JSON object';
  const { model, input, instructions = null, max_output_tokens: limit = null, stream, tools = null, tool_choice: choice } = body;
  if (typeof model !== 'string' || model === '') return 'model: required, a non-empty string';
  const items = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
  if (!Array.isArray(items) || items.length === 0) return 'input: required, a string or a non-empty array';
  const badItem = items.findIndex((item) => !isRecord(item));
  if (badItem >= 0) return `input[${badItem}]: expected an object`;
  if (instructions !== null && typeof instructions !== 'string') return 'instructions: expected a string';
  if (limit !== null && (!Number.isSafeInteger(limit) || (limit as number) < 0)) {
    return 'max_output_tokens: expected a non-negative integer';
  }
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') return 'stream: expected a boolean';
  if (tools !== null && !Array.isArray(tools)) return 'tools: expected an array';
  return {
    model,
    items,
    instructions,
    maxOutputTokens: limit as number | null,
    stream: stream === true,
    tools: tools ?? [],
    // function tools are flat here (`{type, name}`), unlike chat's `{type, function: {name}}`
    toolNames: flatFunctionNames(tools),
    toolChoice: readToolChoice(choice, flatFunctionNames(tools)),
  };
}

// function tools are flat here (`{type, name}`), unlike chat's `{type, function: {name}}`
function flatFunctionNames(tools: unknown[] | null): string[] {
  return (tools ?? []).flatMap((tool) => (isRecord(tool) && tool.type === 'function' && typeof tool.name === 'string' ? [tool.name] : []));
}

/** A content string, or the text of its input_text / output_text / text parts joined by spaces. */
function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts = content.flatMap((part) => (isRecord(part) && TEXT_PARTS.has(part.type as string) && typeof part.text === 'string' ? [part.text] : []));
  return texts.join(' ');
}

/** A message's text; a function call's arguments and a call output's text, as chat counts them. */
function itemText(item: Record<string, unknown>): string {
  if (item.type === 'function_call') return typeof item.arguments === 'string' ? item.arguments : '';
  if (item.type === 'function_call_output') return partsText(item.output);
  return partsText(item.content);
}

/** The chat rule (text.ts `promptTokens`): 1 per input item plus its words, and `instructions` is one more message. */
function inputTokens({ instructions, items }: ResponsesRequest): number {
  const instructionTokens = instructions === null ? 0 : 1 + words(instructions).length;
  return items.reduce((sum, item) => sum + 1 + words(itemText(item)).length, instructionTokens);
}

function lastUserText(items: readonly Record<string, unknown>[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as Record<string, unknown>;
    if (item.role === 'user' && (item.type === undefined || item.type === 'message')) return partsText(item.content);
  }
  return '';
}

function outputItem(plan: PlannedReply, ids: Ids) {
  if (plan.type === 'tool') {
    const { name, arguments: args } = plan;
    return { type: 'function_call', id: ids.functionCall, call_id: ids.callId, name, arguments: args, status: 'completed' };
  }
  const content = [{ type: 'output_text', text: plan.words.join(' '), annotations: [] }];
  return { type: 'message', id: ids.message, status: plan.truncated ? 'incomplete' : 'completed', role: 'assistant', content };
}

function fullUsage({ input_tokens, output_tokens, cached_tokens, reasoning_tokens }: Usage) {
  return {
    input_tokens,
    input_tokens_details: { cached_tokens },
    output_tokens,
    output_tokens_details: { reasoning_tokens },
    total_tokens: input_tokens + output_tokens,
  };
}

/** A Response object; the stream sends it in progress (no output, no usage) and then finished. */
interface Progress {
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  output: unknown[];
  usage: unknown;
  error?: { code: string; message: string };
}

function responseObject(request: ResponsesRequest, ids: Ids, progress: Progress) {
  return {
    id: ids.response,
    object: 'response',
    created_at: SANDBOX_CREATED,
    status: progress.status,
    error: progress.error ?? null,
    incomplete_details: progress.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions,
    max_output_tokens: request.maxOutputTokens,
    model: request.model,
    output: progress.output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: request.tools,
    top_p: 1,
    truncation: 'disabled',
    usage: progress.usage,
    user: null,
    metadata: {},
  };
}

function finalResponse(request: ResponsesRequest, plan: PlannedReply, usage: Usage, ids: Ids) {
  const status = plan.type === 'text' && plan.truncated ? 'incomplete' : 'completed';
  return responseObject(request, ids, { status, output: [outputItem(plan, ids)], usage: fullUsage(usage) });
}

/** The typed events of a streamed answer (§4.3), numbered from 0, made one at a time. */
function* responseEvents(request: ResponsesRequest, plan: PlannedReply, usage: Usage, ids: Ids) {
  let sequence = 0;
  const event = (type: string, fields: object) => ({ type, sequence_number: sequence++, ...fields });
  const started = responseObject(request, ids, { status: 'in_progress', output: [], usage: null });
  yield event('response.created', { response: started });
  yield event('response.in_progress', { response: started });
  const item = outputItem(plan, ids);
  const at = { item_id: item.id, output_index: 0 };
  if (plan.type === 'tool') {
    yield event('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } });
    for (const delta of wordPieces(plan.arguments)) yield event('response.function_call_arguments.delta', { ...at, delta });
    yield event('response.function_call_arguments.done', { ...at, name: plan.name, arguments: plan.arguments });
  } else {
    const text = plan.words.join(' ');
    const part = { ...at, content_index: 0 };
    yield event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    yield event('response.content_part.added', { ...part, part: { type: 'output_text', text: '', annotations: [] } });
    for (let i = 0; i < plan.words.length; i++) {
      yield event('response.output_text.delta', { ...part, delta: i === 0 ? plan.words[i] : ` ${plan.words[i]}`, logprobs: [] });
    }
    yield event('response.output_text.done', { ...part, text, logprobs: [] });
    yield event('response.content_part.done', { ...part, part: { type: 'output_text', text, annotations: [] } });
  }
  yield event('response.output_item.done', { output_index: 0, item });
  const done = finalResponse(request, plan, usage, ids);
  yield event(done.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: done });
}

/**
 * A failure mid-stream as OpenAI sends it (chat-formats.md §4, the recorded `openai-error` stream): `error`,
 * then `response.failed`, numbered on from the `sent` events before them (events are numbered from 0).
 */
function failureEvents(request: ResponsesRequest, ids: Ids, sent: number): string {
  const error = { code: 'server_error', message: midStreamErrorMessage(sent) };
  const failed = responseObject(request, ids, { status: 'failed', output: [], usage: null, error });
  return (
    sseEvent('error', { type: 'error', sequence_number: sent, error: { type: 'server_error', ...error, param: null } }) +
    sseEvent('response.failed', { type: 'response.failed', sequence_number: sent + 1, response: failed })
  );
}
