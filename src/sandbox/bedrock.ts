import type { EventStreamCodec, MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { midStreamErrorMessage } from './reply.js';
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

// Amazon Bedrock's Converse and ConverseStream, SigV4 checked (bedrock-signature.ts), answered by the
// rules in text.ts: the conversation a gateway would send as chat completions gets the same text and
// the same token counts there. A stream is binary event stream frames, made by Smithy's codec.

export { SANDBOX_AWS_CREDENTIALS } from './bedrock-credentials.js';

type Block = Record<string, unknown>;

interface ConverseRequest {
  messages: { role: string; content: Block[] }[];
  systemTexts: string[];
  maxTokens: number | undefined;
  stopSequences: string[];
  toolNames: string[];
  toolChoice: ToolChoice;
}

interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/** Bedrock's error body; its type travels in the `x-amzn-errortype` header. */
const bedrockErrorBody = (_status: number, message: string) => ({ message });

const ERROR_TYPES: Record<number, string> = { 400: 'ValidationException', 403: 'AccessDeniedException', 429: 'ThrottlingException' };

/**
 * The codec and the signature check load with the first Bedrock request, not with the sandbox: the
 * embedded sandbox starts with every `npm start`, and most runs never call Bedrock.
 */
let codec: EventStreamCodec | undefined;
async function loadBedrockTools() {
  const [{ EventStreamCodec }, { refusedSignature }] = await Promise.all([import('@smithy/eventstream-codec'), import('./bedrock-signature.js')]);
  codec ??= new EventStreamCodec(toUtf8, fromUtf8);
  return refusedSignature;
}

export const bedrockConverseRoute: SandboxRoute = {
  kind: 'bedrock',
  method: 'POST',
  path: '/model/:modelId/converse',
  errorBody: bedrockErrorBody,
  // the model is the path's (fault rules select on it)
  modelOf: (params) => params.modelId,
  handle: (ctx) => answerConverse(ctx, false),
};

export const bedrockConverseStreamRoute: SandboxRoute = {
  ...bedrockConverseRoute,
  path: '/model/:modelId/converse-stream',
  handle: (ctx) => answerConverse(ctx, true),
};

async function answerConverse(ctx: SandboxContext, stream: boolean): Promise<void> {
  const refuse = (status: number, message: string, type = ERROR_TYPES[status] ?? 'InternalServerException') =>
    ctx.reply.json(status, bedrockErrorBody(status, message), { 'x-amzn-errortype': type });
  const refusedSignature = await loadBedrockTools();
  const refusal = await refusedSignature({ method: ctx.method, path: ctx.path, query: ctx.query, headers: ctx.headers, body: ctx.rawBody }, 'bedrock');
  if (refusal) return refuse(403, refusal.message, refusal.type);
  const request = parseConverseRequest(ctx.body);
  if (typeof request === 'string') return refuse(400, request);
  const userText = lastUserText(request.messages);
  if ((requestedWords(userText) ?? 0) > MAX_REPLY_WORDS) return refuse(400, `[[words:N]]: N must be at most ${MAX_REPLY_WORDS}`);
  const { toolNames, maxTokens, stopSequences, toolChoice } = request;
  const plan = planReply({ userText, toolNames, maxTokens, stopSequences, toolChoice });
  const usage = converseUsage(inputTokens(request), plan.outputTokens, usageDirectives(userText));
  const hash = hashOf({ model: ctx.params.modelId, body: ctx.body });
  const toolUseId = `tooluse_${hash}`;
  const headers = { 'x-amzn-requestid': `${hash.slice(0, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 16)}-${hash.slice(16, 20)}-${hash.slice(20)}` };
  if (!stream) {
    const output = { message: { role: 'assistant', content: [contentBlock(plan, toolUseId)] } };
    return ctx.reply.json(200, { output, stopReason: stopReason(plan), usage, metrics: { latencyMs: 0 } }, headers);
  }
  await ctx.reply.stream({
    headers: { 'content-type': 'application/vnd.amazon.eventstream', ...headers },
    chunks: streamFrames(plan, usage, toolUseId),
    // what Bedrock sends when the model fails after the answer began
    errorChunk: (sent) => frame({ ':message-type': 'exception', ':exception-type': 'modelStreamErrorException' }, { message: midStreamErrorMessage(sent) }),
  });
}

/**
 * inputTokens is the uncached prompt alone, cache reads and writes (one field for both lifetimes) beside
 * it and in totalTokens; reasoning is counted in outputTokens only. Converse has no field for searches.
 */
function converseUsage(input: number, output: number, extra: UsageDirectives | undefined): Usage {
  if (!extra) return { inputTokens: input, outputTokens: output, totalTokens: input + output };
  const writes = extra.cacheWrite + extra.cacheWrite1h;
  const outputTokens = output + extra.reasoning;
  const cache = extra.cached > 0 || writes > 0 ? { cacheReadInputTokens: extra.cached, cacheWriteInputTokens: writes } : {};
  return { inputTokens: input, outputTokens, totalTokens: input + extra.cached + writes + outputTokens, ...cache };
}

function parseConverseRequest(body: unknown): ConverseRequest | string {
  if (!isRecord(body)) return 'body: expected a JSON object';
  const { messages, system = [], inferenceConfig = {}, toolConfig } = body;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: required, a non-empty list';
  for (const [i, message] of messages.entries()) {
    if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant')) return `messages.${i}.role: expected user or assistant`;
    if (!Array.isArray(message.content) || message.content.length === 0 || !message.content.every(isRecord)) {
      return `messages.${i}.content: expected a non-empty list of content blocks`;
    }
    // Bedrock's own rule, which a translator must merge turns to keep
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (message.role !== expected) return 'A conversation must alternate between user and assistant roles, and start with a user message.';
  }
  if (!Array.isArray(system) || !system.every((s) => isRecord(s) && typeof s.text === 'string')) return 'system: expected a list of {text} blocks';
  if (!isRecord(inferenceConfig)) return 'inferenceConfig: expected an object';
  const { maxTokens, stopSequences = [] } = inferenceConfig;
  if (maxTokens !== undefined && (!Number.isSafeInteger(maxTokens) || (maxTokens as number) < 1))
    return 'inferenceConfig.maxTokens: expected a positive integer';
  if (!Array.isArray(stopSequences) || !stopSequences.every((s) => typeof s === 'string')) return 'inferenceConfig.stopSequences: expected a list of strings';
  const turns = messages as ConverseRequest['messages'];
  const usesTools = turns.some((m) => m.content.some((block) => block.toolUse !== undefined || block.toolResult !== undefined));
  if (toolConfig === undefined && usesTools) return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  const tools = isRecord(toolConfig) && Array.isArray(toolConfig.tools) ? toolConfig.tools : [];
  const toolNames = tools.flatMap((tool) => (isRecord(tool) && isRecord(tool.toolSpec) && typeof tool.toolSpec.name === 'string' ? [tool.toolSpec.name] : []));
  if (toolConfig !== undefined && toolNames.length === 0) return 'toolConfig.tools: expected a non-empty list of {toolSpec}';
  return {
    messages: turns,
    systemTexts: (system as { text: string }[]).map((s) => s.text),
    maxTokens: maxTokens as number | undefined,
    stopSequences: stopSequences as string[],
    toolNames,
    toolChoice: toolChoiceOf(isRecord(toolConfig) ? toolConfig.toolChoice : undefined, toolNames),
  };
}

/** `{any:{}}` forces the first tool offered, `{tool:{name}}` that one; `{auto:{}}` or none leaves it to the "model". */
function toolChoiceOf(choice: unknown, toolNames: string[]): ToolChoice {
  if (!isRecord(choice)) return {};
  if (isRecord(choice.any) && toolNames[0] !== undefined) return { forced: toolNames[0] };
  if (isRecord(choice.tool) && typeof choice.tool.name === 'string' && toolNames.includes(choice.tool.name)) return { forced: choice.tool.name };
  return {};
}

const textOf = (blocks: unknown[]) => blocks.flatMap((block) => (isRecord(block) && typeof block.text === 'string' ? [block.text] : [])).join(' ');

/** A tool result's words: its text blocks, and its json blocks as JSON text. */
function resultWords(result: unknown): number {
  const content = isRecord(result) && Array.isArray(result.content) ? result.content : [];
  const jsonTexts = content.flatMap((block) => (isRecord(block) && block.json !== undefined ? [JSON.stringify(block.json)] : []));
  return words([textOf(content), ...jsonTexts].join(' ')).length;
}

/**
 * The chat rule (text.ts `promptTokens`): 1 per message plus its words. The system blocks are one
 * message; each toolResult is one (chat's `tool` message), and the rest of a user turn one more when
 * it holds anything else; an assistant turn counts its toolUse inputs as JSON, like chat's `arguments`.
 */
function inputTokens({ systemTexts, messages }: ConverseRequest): number {
  let count = systemTexts.length === 0 ? 0 : 1 + words(systemTexts.join(' ')).length;
  for (const { role, content } of messages) {
    const results = content.filter((block) => block.toolResult !== undefined);
    count += results.reduce((sum, block) => sum + 1 + resultWords(block.toolResult), 0);
    if (role === 'user' && results.length === content.length) continue;
    count += 1 + words(textOf(content)).length;
    for (const block of content) if (isRecord(block.toolUse)) count += words(JSON.stringify(block.toolUse.input ?? {})).length;
  }
  return count;
}

/** The text of the last user turn that holds more than tool results: chat would answer that same message. */
function lastUserText(messages: ConverseRequest['messages']): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const { role, content } = messages[i] as ConverseRequest['messages'][number];
    if (role === 'user' && content.some((block) => block.toolResult === undefined)) return textOf(content);
  }
  return '';
}

function contentBlock(plan: PlannedReply, toolUseId: string): Block {
  if (plan.type === 'tool') return { toolUse: { toolUseId, name: plan.name, input: JSON.parse(plan.arguments) } };
  return { text: plan.words.join(' ') };
}

function stopReason(plan: PlannedReply): string {
  if (plan.type === 'tool') return 'tool_use';
  if (plan.stopSequence !== null) return 'stop_sequence';
  return plan.truncated ? 'max_tokens' : 'end_turn';
}

/** One event stream frame: string headers, a JSON payload. */
function frame(headers: Record<string, string>, payload: unknown): Buffer {
  const typed: MessageHeaders = { ':content-type': { type: 'string', value: 'application/json' } };
  for (const [name, value] of Object.entries(headers)) typed[name] = { type: 'string', value };
  const bytes = codec!.encode({ headers: typed, body: fromUtf8(JSON.stringify(payload)) });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const event = (type: string, payload: unknown) => frame({ ':event-type': type, ':message-type': 'event' }, payload);

/** The frames of a streamed answer, made one at a time so a long reply is never held whole. */
function* streamFrames(plan: PlannedReply, usage: Usage, toolUseId: string): Generator<Buffer> {
  yield event('messageStart', { role: 'assistant' });
  if (plan.type === 'tool') {
    yield event('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId, name: plan.name } } });
    for (const piece of wordPieces(plan.arguments)) yield event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: piece } } });
  } else {
    for (let i = 0; i < plan.words.length; i++) {
      yield event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: i === 0 ? plan.words[i] : ` ${plan.words[i]}` } });
    }
  }
  yield event('contentBlockStop', { contentBlockIndex: 0 });
  yield event('messageStop', { stopReason: stopReason(plan) });
  // the last event, after messageStop: the usage of the whole call
  yield event('metadata', { usage, metrics: { latencyMs: 0 } });
}
