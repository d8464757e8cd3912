// Model ids to configured models and their upstream channel, resolved in memory.
import type { ModelConfig, ModelType } from '../config/schema.js';
import { invalidRequest, MESSAGES } from '../errors.js';
import { buildModelRoutes, keyViews } from '../routing/routes.js';
import type { Upstream, Upstreams } from '../upstreams/pool.js';
import type { ResolvedModel } from './types.js';

const TYPE_NAMES: Record<ModelType, string> = {
  chat: 'a chat',
  embedding: 'an embedding',
  transcription: 'a transcription',
  moderation: 'a moderation',
  rerank: 'a rerank',
  search: 'a search',
  minutes: 'a minutes',
  video: 'a video',
  erase: 'an erase',
  image: 'an image',
  tts: 'a speech (tts)',
  ast: 'a speech translation (ast)',
};

export interface Catalogue {
  resolve(id: string | undefined, type: ModelType): ResolvedModel;
  list(type?: string): { id: string; config: ModelConfig }[];
}

export function createCatalogue(models: Record<string, ModelConfig>, upstreams: Upstreams): Catalogue {
  const resolved = new Map<string, ResolvedModel>();
  const viewsByChannel = new Map<string, Upstream[]>();
  const views = (name: string) => {
    let channelViews = viewsByChannel.get(name);
    if (!channelViews) viewsByChannel.set(name, (channelViews = keyViews(upstreams.get(name))));
    return channelViews;
  };
  for (const [id, config] of Object.entries(models)) {
    const routes = buildModelRoutes(id, config, upstreams, views);
    // `upstream` is the first channel's first key: where a call goes when nothing is tried after it.
    resolved.set(id, { id, config, routes, upstreamModel: routes[0]!.upstreamModel, upstream: routes[0]!.keys[0]! });
  }
  return {
    resolve(id, type) {
      if (id === undefined || id === '') throw invalidRequest(MESSAGES.modelRequired);
      const model = resolved.get(id);
      if (!model) throw invalidRequest(`unknown model: ${id}`);
      if (model.config.type !== type) throw invalidRequest(`model ${id} is not ${TYPE_NAMES[type]} model`);
      return model;
    },
    list(type) {
      return [...resolved.values()].filter((m) => type === undefined || m.config.type === type).map((m) => ({ id: m.id, config: m.config }));
    },
  };
}
