// The test catalogue (docs/api.md "Test mode"): what a test key's calls are served by. The sandbox's own
// models, plus every live model id cloned onto the sandbox channel of its type, with the live
// model's price and settings: a test key may name any model the live catalogue has and gets the
// sandbox's answer (and faults), billed on the test balance as the live model would bill. No live
// channel is in it, so whatever a test key names, no call of it reaches one.
import { sandboxCatalogue } from '../config/sandbox-catalogue.js';
import { type ChannelConfig, ConfigSchema, type ModelConfig, type ModelType, modelRoutes } from '../config/schema.js';
import { unavailable } from '../errors.js';
import type { Catalogue } from '../pipeline/catalogue.js';
import type { RoutingConfig } from './table.js';

/**
 * The test channels' names: their own, so they never share a pool, a breaker entry or a metrics
 * label with a live channel that happens to be called `sandbox-openai`.
 */
const TEST_CHANNEL_PREFIX = 'test:';

export const TEST_MODE_UNAVAILABLE = 'test mode is not available on this gateway';

/** Used when no sandbox URL is known: a test key's call is refused before anything is held. */
export const unavailableTestCatalogue: Catalogue = {
  resolve() {
    throw unavailable(TEST_MODE_UNAVAILABLE);
  },
  list: () => [],
};

/** The sandbox model (by id) a live model of each type is served by in test mode. */
function sandboxModelFor(type: ModelType, liveChannelKind: string | undefined): string {
  if (type === 'chat') return liveChannelKind === 'anthropic' ? 'sandbox-claude' : 'sandbox-chat';
  const ids: Record<Exclude<ModelType, 'chat'>, string> = {
    embedding: 'sandbox-embedding',
    transcription: 'sandbox-transcribe',
    moderation: 'sandbox-moderation',
    rerank: 'sandbox-rerank',
    search: 'vendor-web-search',
    minutes: 'vendor-minutes',
    video: 'sandbox-video',
    erase: 'sandbox-erase',
    image: 'sandbox-image',
    tts: 'sandbox-tts',
    ast: 'sandbox-ast',
  };
  return ids[type];
}

/** The test catalogue's channels and models, validated and with defaults as a configuration file's. */
export function testModeConfig(sandboxUrl: string, live: RoutingConfig): { channels: Record<string, ChannelConfig>; models: Record<string, ModelConfig> } {
  const sandbox = ConfigSchema.parse(sandboxCatalogue(sandboxUrl.replace(/\/+$/, '')));
  const channels = Object.fromEntries(Object.entries(sandbox.channels).map(([name, channel]) => [TEST_CHANNEL_PREFIX + name, channel]));
  const onTestChannels = (config: ModelConfig): ModelConfig => {
    const { channels: _, ...rest } = config;
    return { ...rest, channel: TEST_CHANNEL_PREFIX + modelRoutes(config)[0]!.channel };
  };
  const models: Record<string, ModelConfig> = {};
  for (const [id, config] of Object.entries(sandbox.models)) models[id] = onTestChannels(config);
  for (const [id, config] of Object.entries(live.models)) {
    const liveKind = live.channels[modelRoutes(config)[0]!.channel]?.kind;
    const templateId = sandboxModelFor(config.type, liveKind);
    const template = sandbox.models[templateId]!;
    const { channels: _, ...rest } = config;
    // The live model's price and limits, on the sandbox's channel under the sandbox's model name.
    models[id] = { ...rest, channel: TEST_CHANNEL_PREFIX + template.channel!, upstream_model: template.upstream_model ?? templateId };
  }
  return { channels, models };
}
