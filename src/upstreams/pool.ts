// One keep-alive connection pool per configured channel, built once at start.
import { Pool } from 'undici';
import type { ChannelConfig } from '../config/schema.js';

export interface Upstream {
  name: string;
  channel: ChannelConfig;
  pool: Pool;
  /** Path prefix of the channel's base URL, prepended to every upstream path. */
  basePath: string;
}

export interface Upstreams {
  get(name: string): Upstream;
  close(): Promise<void>;
}

export function createUpstreams(channels: Record<string, ChannelConfig>): Upstreams {
  const byName = new Map<string, Upstream>();
  for (const [name, channel] of Object.entries(channels)) {
    const url = new URL(channel.base_url);
    const pool = new Pool(url.origin, {
      connections: channel.connections,
      connectTimeout: channel.timeouts.connect_ms,
      headersTimeout: channel.timeouts.headers_ms,
      bodyTimeout: channel.timeouts.body_ms,
      keepAliveTimeout: 30_000,
    });
    byName.set(name, { name, channel, pool, basePath: url.pathname.replace(/\/+$/, '') });
  }
  return {
    get(name) {
      const upstream = byName.get(name);
      if (!upstream) throw new Error(`no channel named ${name}`);
      return upstream;
    },
    async close() {
      await Promise.all([...byName.values()].map((u) => u.pool.close()));
    },
  };
}
