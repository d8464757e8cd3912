// The chat-like families of the fault matrix: chat completions, messages and responses, each
// passed through and translated through the pivot onto another kind of upstream.
import assert from 'node:assert/strict';
import { chatPromptTokens, geminiPromptTokens, messagesPromptTokens, responsesPromptTokens } from '../../../src/billing/estimates.js';
import { DEFAULT_TOKENIZER } from '../../../src/billing/tokens.js';
import { postJson, sseEvents } from './calls.js';
import type { Family } from './matrix.js';
import { syncFamily } from './sync-families.js';

export const MAX_TOKENS = 50;
const PROMPT = '[[words:12]] fault matrix';
const MESSAGES = [{ role: 'user', content: PROMPT }];
const counting = (id: string) => ({ id, config: { tokenizer: DEFAULT_TOKENIZER, image_input_tokens: 1_600, max_output_tokens: 4_096 } });

/**
 * A token stream the caller left mid-way: the prompt as the gateway counts it, plus the output
 * delivered, never the output cap. An upstream that reports its input at the start (messages'
 * message_start) is billed its own count, the one the caller was shown.
 */
const tokensLeft =
  (prompt: number, { inputShownAtStart = false } = {}) =>
  (units: Record<string, number>, first: string) => {
    const shown = inputShownAtStart ? sseEvents(first)[0]?.data?.message?.usage?.input_tokens : prompt;
    assert.equal(typeof shown, 'number', `the input count the caller was shown: ${first.slice(0, 300)}`);
    assert.equal(units.input_token, shown, `billed ${JSON.stringify(units)}`);
    assert.ok((units.output_token ?? 0) >= 0 && (units.output_token ?? 0) <= MAX_TOKENS, `billed ${JSON.stringify(units)}`);
  };
/**
 * A translated stream the caller left: its prompt as the upstream reported it at the stream's start
 * (the caller's format had no place to show it then), its output at most the cap.
 */
const upstreamPromptLeft = (prompt: number) => (units: Record<string, number>) => {
  assert.equal(units.input_token, prompt, `billed ${JSON.stringify(units)}`);
  assert.ok((units.output_token ?? 0) >= 0 && (units.output_token ?? 0) <= MAX_TOKENS, `billed ${JSON.stringify(units)}`);
};
/** The messages sandbox's count of MESSAGES: one for the message, one per word (src/sandbox/messages.ts). */
const MESSAGES_SANDBOX_PROMPT = 1 + PROMPT.split(' ').length;
/** message_start, content_block_start, ping: what the messages sandbox sends before its first text. */
const MESSAGES_EVENTS_BEFORE_TEXT = 3;
const chatBody = (stream: boolean, model = 'sandbox-chat') => ({ model, messages: MESSAGES, max_tokens: MAX_TOKENS, stream });
const messagesBody = (model: string, stream: boolean) => ({ model, messages: MESSAGES, max_tokens: MAX_TOKENS, stream });
const responsesBody = (stream: boolean) => ({ model: 'sandbox-chat', input: PROMPT, max_output_tokens: MAX_TOKENS, stream });
const ANTHROPIC = { 'anthropic-version': '2023-06-01' };
const chatPromptOf = (model: string) => chatPromptTokens({ messages: MESSAGES }, counting(model));
const chatPrompt = chatPromptOf('sandbox-chat');
const messagesPrompt = (model: string) => messagesPromptTokens({ messages: MESSAGES }, counting(model));
const responsesPrompt = responsesPromptTokens({ input: PROMPT }, counting('sandbox-chat'));
const geminiBody = { contents: [{ role: 'user', parts: [{ text: PROMPT }] }], generationConfig: { maxOutputTokens: MAX_TOKENS } };
const geminiPrompt = geminiPromptTokens(geminiBody, counting('sandbox-chat'));
const geminiCall = (model: string, stream: boolean) => `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
/** Faults after the text began on a messages upstream: message_start, content_block_start and ping carry no text. */
const AFTER_MESSAGES_TEXT_BEGAN = {
  drop: { drop_after_chunks: MESSAGES_EVENTS_BEFORE_TEXT + 2 },
  error: { error_after_chunks: MESSAGES_EVENTS_BEFORE_TEXT + 2 },
};

export const CHAT_FAMILIES: Family[] = [
  syncFamily({ name: 'chat completions', kind: 'chat', send: (gw) => postJson(gw, '/v1/chat/completions', chatBody(false)) }),
  syncFamily({
    name: 'chat completions, stream',
    kind: 'chat',
    protocol: 'chat',
    leftBill: tokensLeft(chatPrompt),
    send: (gw) => postJson(gw, '/v1/chat/completions', chatBody(true)),
  }),
  syncFamily({
    name: 'messages, translated to chat',
    kind: 'chat',
    send: (gw) => postJson(gw, '/v1/messages', messagesBody('sandbox-chat', false), ANTHROPIC),
  }),
  syncFamily({
    name: 'messages, translated to chat, stream',
    kind: 'chat',
    protocol: 'messages',
    translated: true,
    leftBill: tokensLeft(messagesPrompt('sandbox-chat')),
    // the translator skips a chunk it cannot read; the stream then ends without [DONE] having sent nothing
    failsBeforeFirstByte: ['malformed'],
    send: (gw) => postJson(gw, '/v1/messages', messagesBody('sandbox-chat', true), ANTHROPIC),
  }),
  syncFamily({
    name: 'chat completions, translated to messages',
    kind: 'messages',
    send: (gw) => postJson(gw, '/v1/chat/completions', chatBody(false, 'sandbox-claude')),
  }),
  syncFamily({
    name: 'chat completions, translated to messages, stream',
    kind: 'messages',
    protocol: 'chat',
    translated: true,
    leftBill: upstreamPromptLeft(MESSAGES_SANDBOX_PROMPT),
    // the translator skips an event it cannot read; the stream then ends without message_stop having sent nothing
    failsBeforeFirstByte: ['malformed'],
    behaviour: AFTER_MESSAGES_TEXT_BEGAN,
    send: (gw) => postJson(gw, '/v1/chat/completions', chatBody(true, 'sandbox-claude')),
  }),
  syncFamily({ name: 'messages, native', kind: 'messages', send: (gw) => postJson(gw, '/v1/messages', messagesBody('sandbox-claude', false), ANTHROPIC) }),
  syncFamily({
    name: 'messages, native, stream',
    kind: 'messages',
    protocol: 'messages',
    leftBill: tokensLeft(messagesPrompt('sandbox-claude'), { inputShownAtStart: true }),
    send: (gw) => postJson(gw, '/v1/messages', messagesBody('sandbox-claude', true), ANTHROPIC),
  }),
  syncFamily({ name: 'responses', kind: 'responses', send: (gw) => postJson(gw, '/v1/responses', responsesBody(false)) }),
  syncFamily({
    name: 'responses, stream',
    kind: 'responses',
    protocol: 'responses',
    leftBill: tokensLeft(responsesPrompt),
    send: (gw) => postJson(gw, '/v1/responses', responsesBody(true)),
  }),
  syncFamily({
    name: 'responses, translated to messages',
    kind: 'messages',
    send: (gw) => postJson(gw, '/v1/responses', { ...responsesBody(false), model: 'sandbox-claude' }),
  }),
  syncFamily({
    name: 'responses, translated to messages, stream',
    kind: 'messages',
    protocol: 'responses',
    translated: true,
    leftBill: upstreamPromptLeft(MESSAGES_SANDBOX_PROMPT),
    failsBeforeFirstByte: ['malformed'],
    behaviour: AFTER_MESSAGES_TEXT_BEGAN,
    send: (gw) => postJson(gw, '/v1/responses', { ...responsesBody(true), model: 'sandbox-claude' }),
  }),
  syncFamily({ name: 'Gemini API, native', kind: 'gemini', send: (gw) => postJson(gw, geminiCall('sandbox-gemini', false), geminiBody) }),
  syncFamily({
    name: 'Gemini API, native, stream',
    kind: 'gemini',
    protocol: 'gemini',
    leftBill: tokensLeft(geminiPrompt),
    send: (gw) => postJson(gw, geminiCall('sandbox-gemini', true), geminiBody),
  }),
  syncFamily({ name: 'Gemini API, translated to chat', kind: 'chat', send: (gw) => postJson(gw, geminiCall('sandbox-chat', false), geminiBody) }),
  syncFamily({
    name: 'Gemini API, translated to chat, stream',
    kind: 'chat',
    protocol: 'gemini',
    translated: true,
    leftBill: tokensLeft(geminiPrompt),
    // the translator skips a chunk it cannot read; the stream then ends without [DONE] having sent nothing
    failsBeforeFirstByte: ['malformed'],
    send: (gw) => postJson(gw, geminiCall('sandbox-chat', true), geminiBody),
  }),
  syncFamily({
    name: 'chat completions on Azure',
    kind: 'azure',
    send: (gw) => postJson(gw, '/v1/chat/completions', chatBody(false, 'sandbox-azure')),
  }),
  syncFamily({
    name: 'chat completions on Azure, stream',
    kind: 'azure',
    protocol: 'chat',
    leftBill: tokensLeft(chatPromptOf('sandbox-azure')),
    send: (gw) => postJson(gw, '/v1/chat/completions', chatBody(true, 'sandbox-azure')),
  }),
  syncFamily({
    name: 'chat completions, translated to Bedrock',
    kind: 'bedrock',
    send: (gw) => postJson(gw, '/v1/chat/completions', chatBody(false, 'sandbox-bedrock')),
  }),
  syncFamily({
    name: 'chat completions, translated to Bedrock, stream',
    kind: 'bedrock',
    protocol: 'chat',
    translated: true,
    leftBill: tokensLeft(chatPromptOf('sandbox-bedrock')),
    // the decoder refuses a frame whose checksum fails: the stream fails before anything was sent
    failsBeforeFirstByte: ['malformed'],
    send: (gw) => postJson(gw, '/v1/chat/completions', chatBody(true, 'sandbox-bedrock')),
  }),
];
