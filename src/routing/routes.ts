// A model's channels, built once from the configuration: each channel with its upstream model,
// priority and weight, and one view of the channel per upstream key (same connection pool), so an
// adapter sends whichever key the router picked without knowing there are several.
import { createHash } from 'node:crypto';
import { channelKeys, type ModelConfig, modelRoutes } from '../config/schema.js';
import type { Upstream, Upstreams } from '../upstreams/pool.js';

export interface ModelRoute {
  channel: string;
  upstreamModel: string;
  priority: number;
  weight: number;
  /** The channel once per key, in turn order; one view without a key when the channel has none. */
  keys: Upstream[];
}

/**
 * A key's name in logs, task rows and the operator's view: the first 8 hex of its sha256. It tells
 * keys apart and survives their reordering in the file, and it gives nothing of the key away.
 */
export const keyFingerprint = (key: string): string => createHash('sha256').update(key).digest('hex').slice(0, 8);

/** The channel's views, one per key (memoised per channel: every model on it shares them). */
export function keyViews(upstream: Upstream): Upstream[] {
  const keys = channelKeys(upstream.channel);
  if (keys.length === 0) return [{ ...upstream, keyId: null }];
  return keys.map((key) => ({ ...upstream, channel: { ...upstream.channel, api_key: key }, keyId: keyFingerprint(key) }));
}

export function buildModelRoutes(id: string, config: ModelConfig, upstreams: Upstreams, views: (name: string) => Upstream[]): ModelRoute[] {
  return modelRoutes(config).map((route) => ({
    channel: upstreams.get(route.channel).name,
    upstreamModel: route.upstreamModel ?? id,
    priority: route.priority,
    weight: route.weight,
    keys: views(route.channel),
  }));
}
