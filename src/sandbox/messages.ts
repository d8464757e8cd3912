import type { IncomingHttpHeaders } from 'node:http';
import { mapChunks, midStreamErrorMessage, SSE_HEADERS, sseEvent } from './reply.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import {
  contentText,
  hashOf,
  isRecord,
  MAX_REPLY_WORDS,
  type PlannedReply,
  planReply,
  readToolChoice,
  requestedWords,
  type ToolChoice,
  type UsageDirectives,
  usageDirectives,
  wordPieces,
  words,
} from './text.js';

// Anthropic Messages (chat-formats.md §1), answered by the rules in text.ts: the conversation a gateway
// would translate to chat completions gets the same text and the same token counts there.

interface MessagesRequest {
  model: string;
  messages: Record<string, unknown>[];
  system: unknown;
  maxTokens: number;
  stopSequences: string[];
  stream: boolean;
  toolNames: string[];
  toolChoice: ToolChoice;
}

interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** What usage directives in the prompt add (text.ts `usageDirectives`). */
  extra?: UsageDirectives | undefined;
}

interface Ids {
  id: string;
  toolUseId: string;
}

type AnthropicErrorBody = { type: 'error'; error: { type: string; message: string } };

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** Anthropic's error body, with the type its API sends for that status (chat-formats.md §1.4). */
export function anthropicErrorForStatus(status: number, message: string): AnthropicErrorBody {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message } };
}

export const messagesRoute: SandboxRoute = {
  kind: 'messages',
  method: 'POST',
  path: '/v1/messages',
  errorBody: anthropicErrorForStatus,
  handle: answerMessages,
};

/** Anthropic's count_tokens: the input tokens the same request would be billed for, counted as answerMessages counts them. */
export const messagesCountTokensRoute: SandboxRoute = {
  kind: 'count_tokens',
  method: 'POST',
  path: '/v1/messages/count_tokens',
  errorBody: anthropicErrorForStatus,
  handle: countMessageTokens,
};

function countMessageTokens(ctx: SandboxContext): void {
  const refuse = (status: number, message: string) => ctx.reply.json(status, anthropicErrorForStatus(status, message));
  if (!headerValue(ctx.headers, 'x-api-key')) return refuse(401, 'x-api-key header is required');
  // the call takes no max_tokens; the parser of a messages request asks for one
  const request = parseMessagesRequest(isRecord(ctx.body) ? { ...ctx.body, max_tokens: 1 } : ctx.body);
  if (typeof request === 'string') return refuse(400, request);
  ctx.reply.json(200, { input_tokens: inputTokens(request) });
}

async function answerMessages(ctx: SandboxContext): Promise<void> {
  const refuse = (status: number, message: string) => ctx.reply.json(status, anthropicErrorForStatus(status, message));
  if (!headerValue(ctx.headers, 'x-api-key')) return refuse(401, 'x-api-key header is required');
  if (!headerValue(ctx.headers, 'anthropic-version')) return refuse(400, 'anthropic-version: header is required');
  const request = parseMessagesRequest(ctx.body);
  if (typeof request === 'string') return refuse(400, request);
  const userText = lastUserText(request.messages);
  if ((requestedWords(userText) ?? 0) > MAX_REPLY_WORDS) return refuse(400, `[[words:N]]: N must be at most ${MAX_REPLY_WORDS}`);
  const { toolNames, maxTokens, stopSequences, toolChoice } = request;
  const plan = planReply({ userText, toolNames, maxTokens, stopSequences, toolChoice });
  const extra = usageDirectives(userText);
  // reasoning is thinking, which Anthropic counts among output_tokens
  const usage = { input_tokens: inputTokens(request), output_tokens: plan.outputTokens + (extra?.reasoning ?? 0), extra };
  const hash = hashOf(ctx.body);
  const ids = { id: `msg_${hash}`, toolUseId: `toolu_${hash}` };
  const headers = { 'request-id': `req_${hash}` };
  if (!request.stream) return ctx.reply.json(200, message(request, plan, usage, ids), headers);

  await ctx.reply.stream({
    headers: { ...SSE_HEADERS, ...headers },
    chunks: mapChunks(messageEvents(request, plan, usage, ids), (event) => sseEvent(event.type, event)),
    // Anthropic's mid-stream error (chat-formats.md §1.5); overloaded is the one it sends after a 200
    errorChunk: (sent) => sseEvent('error', anthropicErrorForStatus(529, `Overloaded (${midStreamErrorMessage(sent)})`)),
  });
}

function headerValue(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  return typeof value === 'string' ? value.trim() : '';
}

function parseMessagesRequest(body: unknown): MessagesRequest | string {
  if (!isRecord(body)) return 'body: expected a JSON object';
  const { model, messages, system = null, max_tokens: maxTokens, stop_sequences: stops = null, stream, tools = null, tool_choice: choice } = body;
  if (typeof model !== 'string' || model === '') return 'model: required, a non-empty string';
  if (!Number.isSafeInteger(maxTokens) || (maxTokens as number) < 1) return 'max_tokens: required, a positive integer';
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: required, a non-empty array';
  // strict like Anthropic: a `system` role here means a translator forgot to hoist it to the top level
  const badMessage = messages.findIndex((m) => !isRecord(m) || (m.role !== 'user' && m.role !== 'assistant'));
  if (badMessage >= 0) return `messages[${badMessage}].role: expected "user" or "assistant"`;
  if (system !== null && typeof system !== 'string' && !Array.isArray(system)) {
    return 'system: expected a string or an array of text blocks';
  }
  const stopSequences = stops === null ? [] : stops;
  if (!Array.isArray(stopSequences) || !stopSequences.every((s) => typeof s === 'string')) {
    return 'stop_sequences: expected an array of strings';
  }
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') return 'stream: expected a boolean';
  if (tools !== null && !Array.isArray(tools)) return 'tools: expected an array';
  return {
    model,
    messages,
    system,
    maxTokens: maxTokens as number,
    stopSequences,
    stream: stream === true,
    // custom tools only: a server tool (`type: "web_search_20250305"`) is not the model's to call
    toolNames: customToolNames(tools),
    toolChoice: readToolChoice(choice, customToolNames(tools)),
  };
}

// custom tools only: a server tool (`type: "web_search_20250305"`) is not the model's to call
function customToolNames(tools: unknown[] | null): string[] {
  return (tools ?? []).flatMap((tool) =>
    isRecord(tool) && typeof tool.name === 'string' && (tool.type === undefined || tool.type === 'custom') ? [tool.name] : [],
  );
}

/** The chat rule (text.ts `promptTokens`): 1 per message plus its words, and the `system` prompt is one more message. */
function inputTokens({ system, messages }: MessagesRequest): number {
  const systemTokens = system === null ? 0 : 1 + words(contentText(system)).length;
  return messages.reduce((sum, m) => sum + 1 + blockWords(m.content), systemTokens);
}

/** Words of the text blocks, of tool_use inputs (as JSON, like chat's `arguments`) and of tool_result contents. */
function blockWords(content: unknown): number {
  let count = words(contentText(content)).length;
  if (!Array.isArray(content)) return count;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === 'tool_use') count += words(JSON.stringify(block.input ?? {})).length;
    if (block.type === 'tool_result') count += words(contentText(block.content)).length;
  }
  return count;
}

/**
 * The text of the last user turn, skipping turns made only of tool_result blocks: those become `tool`
 * messages in chat completions, so the chat protocol would answer the same turn.
 */
function lastUserText(messages: readonly Record<string, unknown>[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const { role, content } = messages[i] as Record<string, unknown>;
    if (role !== 'user') continue;
    const onlyResults = Array.isArray(content) && content.length > 0 && content.every((b) => isRecord(b) && b.type === 'tool_result');
    if (!onlyResults) return contentText(content);
  }
  return '';
}

function contentBlock(plan: PlannedReply, ids: Ids) {
  if (plan.type === 'tool') return { type: 'tool_use', id: ids.toolUseId, name: plan.name, input: JSON.parse(plan.arguments) };
  return { type: 'text', text: plan.words.join(' ') };
}

function stopReason(plan: PlannedReply): { stop_reason: string; stop_sequence: string | null } {
  if (plan.type === 'tool') return { stop_reason: 'tool_use', stop_sequence: null };
  if (plan.stopSequence !== null) return { stop_reason: 'stop_sequence', stop_sequence: plan.stopSequence };
  return { stop_reason: plan.truncated ? 'max_tokens' : 'end_turn', stop_sequence: null };
}

/**
 * input_tokens is the uncached prompt alone: cached reads and writes come beside it, the writes split
 * by lifetime in cache_creation. Web searches are the server tool's, reported with the final usage.
 */
function fullUsage({ input_tokens, output_tokens, extra }: Usage, final = true) {
  if (!extra) return { input_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens };
  const { cached, cacheWrite, cacheWrite1h, webSearch } = extra;
  return {
    input_tokens,
    cache_creation_input_tokens: cacheWrite + cacheWrite1h,
    cache_read_input_tokens: cached,
    cache_creation: { ephemeral_5m_input_tokens: cacheWrite, ephemeral_1h_input_tokens: cacheWrite1h },
    output_tokens,
    ...(final && webSearch > 0 && { server_tool_use: { web_search_requests: webSearch } }),
  };
}

/** message_delta's usage: the output, and the web searches the call made. */
function deltaUsage({ output_tokens, extra }: Usage) {
  return { output_tokens, ...(extra && extra.webSearch > 0 && { server_tool_use: { web_search_requests: extra.webSearch } }) };
}

function message(request: MessagesRequest, plan: PlannedReply, usage: Usage, ids: Ids) {
  const base = { id: ids.id, type: 'message', role: 'assistant', model: request.model };
  return { ...base, content: [contentBlock(plan, ids)], ...stopReason(plan), usage: fullUsage(usage) };
}

/** The events of a streamed answer (§1.5), made one at a time so a long reply is never held whole. */
function* messageEvents(request: MessagesRequest, plan: PlannedReply, usage: Usage, ids: Ids) {
  const start = { id: ids.id, type: 'message', role: 'assistant', model: request.model, content: [] };
  // as Anthropic does: the start counts one output token, message_delta carries the total
  const startUsage = fullUsage({ ...usage, output_tokens: 1 }, false);
  yield { type: 'message_start', message: { ...start, stop_reason: null, stop_sequence: null, usage: startUsage } };
  if (plan.type === 'tool') {
    yield { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: ids.toolUseId, name: plan.name, input: {} } };
    yield { type: 'ping' };
    // Anthropic's first input_json_delta is empty: a translator must not take it for the end
    for (const piece of ['', ...wordPieces(plan.arguments)]) {
      yield { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: piece } };
    }
  } else {
    yield { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } };
    yield { type: 'ping' };
    for (let i = 0; i < plan.words.length; i++) {
      yield { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: i === 0 ? plan.words[i] : ` ${plan.words[i]}` } };
    }
  }
  yield { type: 'content_block_stop', index: 0 };
  yield { type: 'message_delta', delta: stopReason(plan), usage: deltaUsage(usage) };
  yield { type: 'message_stop' };
}
