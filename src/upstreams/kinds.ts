// The pivot adapter of each chat-serving channel kind: a route that translates asks here, by the
// serving channel's kind, and never names a kind's wire format itself.
import type { ChannelConfig } from '../config/schema.js';
import { anthropicAdapter } from './anthropic/adapter.js';
import { geminiAdapter } from './gemini/adapter.js';
import { openAiChatAdapter } from './openai-chat/adapter.js';
import type { PivotUpstreamAdapter } from './pivot-adapter.js';

/** Bedrock's signer and event-stream codec load with its first call, not with every gateway's start. */
const bedrock = () => import('./bedrock/client.js').then((module) => module.bedrockAdapter);
const lazyBedrockAdapter: PivotUpstreamAdapter = {
  complete: async (...args) => (await bedrock()).complete(...args),
  openStream: async (...args) => (await bedrock()).openStream(...args),
};

const ADAPTERS: Partial<Record<ChannelConfig['kind'], PivotUpstreamAdapter>> = {
  openai: openAiChatAdapter,
  azure: openAiChatAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
  bedrock: lazyBedrockAdapter,
};

export function pivotAdapterFor(kind: ChannelConfig['kind']): PivotUpstreamAdapter {
  const adapter = ADAPTERS[kind];
  // The config refuses a chat model on any other kind (config/schema.ts KINDS_FOR_TYPE).
  if (!adapter) throw new Error(`channels of kind ${kind} serve no chat calls`);
  return adapter;
}
