// One HTTP exchange with a user-supplied URL (a webhook receiver, a file to fetch), under the
// policy of url-policy.ts. The name is resolved here, every address it resolves to is judged,
// and the socket is opened to a judged address, so a second resolution (DNS rebinding) never
// happens; the connected socket's remote address is judged once more, for any path that
// reaches a socket without passing through our lookup. No redirect is followed: a 3xx is an answer.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { buildConnector, Client, type Dispatcher } from 'undici';
import { checkUrlSyntax, ipLiteralHost, RefusedUrlError, refusedAddressReason } from './url-policy.js';

export { RefusedUrlError } from './url-policy.js';

/** The whole exchange (resolution, connection, headers, body) took longer than `timeoutMs`. */
export class RequestTimeoutError extends Error {
  override name = 'RequestTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
  }
}

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface SafeRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** For the whole exchange, from resolution to the last byte read. */
  timeoutMs: number;
  /** Operator's `network.allow_private_urls`. */
  allowPrivate?: boolean;
  /** At most this many bytes of the answer are read; the rest is dropped. Default 64 KiB. */
  maxResponseBytes?: number;
  /** The field named in refusal messages. Default `url`. */
  field?: string;
  /** Aborts the exchange early (shutdown); the reason is rethrown. */
  signal?: AbortSignal;
  /** Resolution, replaceable in tests. Default: dns.lookup with `all: true`. */
  lookup?: LookupAll;
}

export interface SafeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The answer was longer than maxResponseBytes. */
  truncated: boolean;
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true });

export async function safeRequest(url: string, options: SafeRequestOptions): Promise<SafeResponse> {
  const { field = 'url', allowPrivate = false, timeoutMs, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES } = options;
  const refusal = checkUrlSyntax(url, { field, allowPrivate });
  if (refusal) throw new RefusedUrlError(refusal);
  const target = new URL(url);

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new RequestTimeoutError(timeoutMs)), timeoutMs);
  const forwardAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) forwardAbort();
  options.signal?.addEventListener('abort', forwardAbort, { once: true });
  let client: Client | undefined;
  try {
    const addresses = await untilAborted(resolve(target, options.lookup ?? defaultLookup), controller.signal);
    if (!allowPrivate) {
      for (const address of addresses) {
        const reason = refusedAddressReason(address);
        if (reason) throw new RefusedUrlError(`${field}: ${target.hostname} resolves to refused address ${address} (${reason})`);
      }
    }
    client = new Client(target.origin, {
      connect: pinnedConnector({ addresses, allowPrivate, field, timeoutMs }),
      // one exchange per client: nothing to keep alive for
      pipelining: 0,
    });
    const response = await client.request({
      method: (options.method ?? 'GET') as Dispatcher.HttpMethod,
      path: `${target.pathname}${target.search}`,
      headers: options.headers,
      body: options.body,
      signal: controller.signal,
    });
    const { body, truncated } = await readAtMost(response.body, maxResponseBytes);
    return { status: response.statusCode, headers: response.headers, body, truncated };
  } catch (error) {
    // undici reports an abort in its own words; the reason we aborted with says what happened.
    if (controller.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', forwardAbort);
    client?.destroy().catch(() => {});
  }
}

async function resolve(target: URL, lookup: LookupAll): Promise<string[]> {
  const literal = ipLiteralHost(target);
  if (literal) return [literal];
  const answers = await lookup(target.hostname);
  if (answers.length === 0) throw new Error(`${target.hostname}: no address`);
  return answers.map((a) => a.address);
}

// Tries the judged addresses in order (an IPv6 answer first on a host without IPv6 routing
// must not end the attempt), and judges the socket each one yields.
function pinnedConnector({
  addresses,
  allowPrivate,
  field,
  timeoutMs,
}: {
  addresses: string[];
  allowPrivate: boolean;
  field: string;
  timeoutMs: number;
}): buildConnector.connector {
  const connect = buildConnector({ timeout: timeoutMs });
  return (options, callback) => {
    let next = 0;
    const attempt = () => {
      const address = addresses[next++] as string;
      // `host` keeps the name, so TLS sends it as SNI and checks the certificate against it.
      connect({ ...options, hostname: address }, (error, socket) => {
        if (error) {
          if (next < addresses.length) attempt();
          else callback(error, null);
          return;
        }
        const remote = socket.remoteAddress;
        const reason = allowPrivate ? undefined : remote ? refusedAddressReason(remote) : 'no remote address';
        if (reason) {
          socket.destroy();
          callback(new RefusedUrlError(`${field}: connected to refused address ${remote ?? '?'} (${reason})`), null);
          return;
        }
        callback(null, socket);
      });
    };
    attempt();
  };
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolvePromise, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function readAtMost(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<{ body: Buffer; truncated: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size + chunk.length > limit) {
      parts.push(chunk.subarray(0, limit - size));
      body.destroy();
      return { body: Buffer.concat(parts), truncated: true };
    }
    parts.push(chunk);
    size += chunk.length;
  }
  return { body: Buffer.concat(parts), truncated: false };
}
