import { hasBearer, openAiError, openAiErrorForStatus, UNAUTHORIZED } from './openai-common.js';
import { mapChunks, midStreamErrorMessage, SSE_HEADERS, sseData } from './reply.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import {
  hashOf,
  isRecord,
  lastUserText,
  MAX_REPLY_WORDS,
  type PlannedReply,
  planReply,
  promptTokens,
  readToolChoice,
  requestedWords,
  type ToolChoice,
  type UsageDirectives,
  usageDirectives,
  wordPieces,
} from './text.js';

// OpenAI chat completions (chat-formats.md §2), answered by the rules in text.ts.

/** Fixed, not a clock: the whole answer is then a function of the request, fit to record as a fixture. */
export const SANDBOX_CREATED = 1_735_689_600;

interface ChatRequest {
  model: string;
  messages: unknown[];
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
  stopSequences: string[];
  toolNames: string[];
  toolChoice: ToolChoice;
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number; audio_tokens: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number };
}

export const chatRoute: SandboxRoute = {
  kind: 'chat',
  method: 'POST',
  path: '/v1/chat/completions',
  errorBody: openAiErrorForStatus,
  handle: answerChat,
};

async function answerChat(ctx: SandboxContext): Promise<void> {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const request = parseChatRequest(ctx.body);
  if (typeof request === 'string') return ctx.reply.json(400, openAiError(request, 'invalid_request_error'));
  const userText = lastUserText(request.messages);
  if ((requestedWords(userText) ?? 0) > MAX_REPLY_WORDS) {
    return ctx.reply.json(400, openAiError(`[[words:N]]: N must be at most ${MAX_REPLY_WORDS}`, 'invalid_request_error'));
  }
  const { toolNames, maxTokens, stopSequences, toolChoice } = request;
  const plan = planReply({ userText, toolNames, maxTokens, stopSequences, toolChoice });
  const usage = chatUsage(promptTokens(request.messages), plan.outputTokens, usageDirectives(userText));
  const hash = hashOf(ctx.body);
  const ids = { id: `chatcmpl-${hash}`, callId: `call_${hash}` };
  const headers = { 'x-request-id': `req_${hash}` };
  if (!request.stream) return ctx.reply.json(200, chatCompletion(request, plan, usage, ids), headers);

  await ctx.reply.stream({
    headers: { ...SSE_HEADERS, ...headers },
    chunks: mapChunks(chatChunks(request, plan, usage, ids), sseData),
    // OpenAI's mid-stream error: a data event whose object has a top-level `error` (chat-formats.md §2.4)
    errorChunk: (sent) => sseData(openAiError(midStreamErrorMessage(sent), 'server_error')),
  });
}

function parseChatRequest(body: unknown): ChatRequest | string {
  if (!isRecord(body)) return 'body: expected a JSON object';
  const { model, messages, stream, stream_options: options, tools, stop, tool_choice: choice } = body;
  if (typeof model !== 'string' || model === '') return 'model: required, a non-empty string';
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: required, a non-empty array';
  const badMessage = messages.findIndex((message) => !isRecord(message) || typeof message.role !== 'string');
  if (badMessage >= 0) return `messages[${badMessage}]: expected an object with a role`;
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') return 'stream: expected a boolean';
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) return 'tools: expected an array';
  const stopSequences = stop === undefined || stop === null ? [] : typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(stopSequences) || !stopSequences.every((s) => typeof s === 'string')) {
    return 'stop: expected a string or an array of strings';
  }
  const limits: number[] = [];
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (!Number.isSafeInteger(value) || (value as number) < 0) return `${field}: expected a non-negative integer`;
    limits.push(value as number);
  }
  return {
    model,
    messages,
    stream: stream === true,
    includeUsage: isRecord(options) && options.include_usage === true,
    maxTokens: limits.length > 0 ? Math.min(...limits) : undefined,
    stopSequences,
    toolNames: functionNames(tools),
    toolChoice: readToolChoice(choice, functionNames(tools)),
  };
}

function functionNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool) =>
    isRecord(tool) && tool.type === 'function' && isRecord(tool.function) && typeof tool.function.name === 'string' ? [tool.function.name] : [],
  );
}

function chatCompletion(request: ChatRequest, plan: PlannedReply, usage: Usage, ids: { id: string; callId: string }) {
  const message =
    plan.type === 'tool'
      ? {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: ids.callId, type: 'function', function: { name: plan.name, arguments: plan.arguments } }],
        }
      : { role: 'assistant', content: plan.words.join(' '), refusal: null };
  return {
    id: ids.id,
    object: 'chat.completion',
    created: SANDBOX_CREATED,
    model: request.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(plan) }],
    usage,
  };
}

/** The chunks of a streamed answer, made one at a time so a long reply is never held whole. */
function* chatChunks(request: ChatRequest, plan: PlannedReply, usage: Usage, ids: { id: string; callId: string }) {
  const base = { id: ids.id, object: 'chat.completion.chunk', created: SANDBOX_CREATED, model: request.model };
  // as OpenAI does: with include_usage every chunk says `usage: null` until the last one carries it
  const usageNull = request.includeUsage ? { usage: null } : {};
  const chunk = (delta: object, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...usageNull,
  });
  if (plan.type === 'tool') {
    const call = { index: 0, id: ids.callId, type: 'function', function: { name: plan.name, arguments: '' } };
    yield chunk({ role: 'assistant', content: null, tool_calls: [call] });
    for (const piece of wordPieces(plan.arguments)) yield chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
  } else {
    yield chunk({ role: 'assistant', content: '' });
    for (let i = 0; i < plan.words.length; i++) yield chunk({ content: i === 0 ? plan.words[i] : ` ${plan.words[i]}` });
  }
  yield chunk({}, finishReason(plan));
  if (request.includeUsage) yield { ...base, choices: [], usage };
  yield '[DONE]';
}

/**
 * Usage as OpenAI reports it; with usage directives, the cached reads and the writes (both lengths, as
 * OpenAI-compatible upstreams report writes) join the prompt, the reasoning the completion, and the
 * details tell them apart. Web searches have no field here.
 */
function chatUsage(prompt: number, output: number, extra: UsageDirectives | undefined): Usage {
  if (!extra) return { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output };
  const writes = extra.cacheWrite + extra.cacheWrite1h;
  const promptTokens = prompt + extra.cached + writes;
  const completionTokens = output + extra.reasoning;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: extra.cached, audio_tokens: 0, ...(writes > 0 && { cache_write_tokens: writes }) },
    completion_tokens_details: { reasoning_tokens: extra.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function finishReason(plan: PlannedReply): string {
  if (plan.type === 'tool') return 'tool_calls';
  return plan.truncated ? 'length' : 'stop';
}
