// One keep-alive connection pool per configured channel, built at start and on a reload (which
// keeps the pools of channels it leaves as they were).
import { isDeepStrictEqual } from 'node:util';
import type { ChannelConfig } from '../config/schema.js';
import { type ConnectionWaitObserver, WaitBoundedPool } from './wait-bounded-pool.js';

export { type ConnectionWaitObserver, ConnectionWaitTimeoutError } from './wait-bounded-pool.js';

export interface Upstream {
  name: string;
  channel: ChannelConfig;
  pool: WaitBoundedPool;
  /** Path prefix of the channel's base URL, prepended to every upstream path. */
  basePath: string;
  /** With several keys, the fingerprint of the one this view sends (routing/routes.ts); null without a key. */
  keyId?: string | null;
}

export interface Upstreams {
  get(name: string): Upstream;
  /** Every channel, in the config's order (the operator's view lists them). */
  list(): Upstream[];
  close(): Promise<void>;
}

/**
 * A stream holds its HTTP/1.1 connection for its whole length, so `connections` is the channel's
 * limit on calls at once (see tollroute.example.yaml for the default's reasons). Past it a call
 * waits at most `connection_wait_ms` for a connection, then fails unsent (a 502, its hold released).
 */
export function createUpstreams(channels: Record<string, ChannelConfig>, observer?: ConnectionWaitObserver, previous?: Upstreams): Upstreams {
  const byName = new Map<string, Upstream>();
  const kept = new Map(previous?.list().map((upstream) => [upstream.name, upstream]));
  for (const [name, channel] of Object.entries(channels)) {
    // A reload that leaves a channel as it was keeps its pool: warm connections, and one
    // `connections` limit for the calls before and after the reload.
    const same = kept.get(name);
    if (same && isDeepStrictEqual(same.channel, channel)) {
      byName.set(name, same);
      continue;
    }
    const url = new URL(channel.base_url);
    const pool = new WaitBoundedPool(url.origin, {
      channel: name,
      connections: channel.connections,
      maxWaitMs: channel.connection_wait_ms,
      observer,
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
    list: () => [...byName.values()],
    async close() {
      await Promise.all([...byName.values()].map((u) => u.pool.close()));
    },
  };
}
