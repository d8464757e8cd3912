// The pivot adapter of each chat-serving channel kind: a route that translates asks here, by the
// serving channel's kind, and never names a kind's wire format itself.
import type { ChannelConfig } from '../config/schema.js';
import { anthropicAdapter } from './anthropic/adapter.js';
import { bedrockAdapter } from './bedrock/client.js';
import { geminiAdapter } from './gemini/adapter.js';
import { openAiChatAdapter } from './openai-chat/adapter.js';
import type { PivotUpstreamAdapter } from './pivot-adapter.js';

const ADAPTERS: Partial<Record<ChannelConfig['kind'], PivotUpstreamAdapter>> = {
  openai: openAiChatAdapter,
  azure: openAiChatAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
  bedrock: bedrockAdapter,
};

export function pivotAdapterFor(kind: ChannelConfig['kind']): PivotUpstreamAdapter {
  const adapter = ADAPTERS[kind];
  // The config refuses a chat model on any other kind (config/schema.ts KINDS_FOR_TYPE).
  if (!adapter) throw new Error(`channels of kind ${kind} serve no chat calls`);
  return adapter;
}
