// Which channels of a configuration call real upstreams: every one whose base_url is not the embedded
// sandbox (`sandbox.port` on this machine). The sandbox's control API is never on beside them.
import type { Config } from './schema.js';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

function isEmbeddedSandbox(baseUrl: string, { host, sandbox }: Pick<Config, 'host' | 'sandbox'>): boolean {
  const url = new URL(baseUrl);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return url.protocol === 'http:' && port === sandbox.port && (LOOPBACK_NAMES.has(url.hostname) || hostname === host);
}

/** The names of the channels that are not the embedded sandbox (none on the built-in catalogue). */
export function realChannels(config: Pick<Config, 'channels' | 'host' | 'sandbox'>): string[] {
  return Object.entries(config.channels)
    .filter(([, channel]) => !isEmbeddedSandbox(channel.base_url, config))
    .map(([name]) => name);
}
