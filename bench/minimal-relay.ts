// Two references for `npm run bench -- --relays`: the least a JSON gateway on the gateway's own
// stack can do for a chat call. Each reads the caller's body, parses it, sends it upstream with
// undici (the gateway's client), parses the answer and writes it out again: the gateway's HTTP and
// JSON work, and none of its own (no key, hold, price, ledger, log line or metric). `undici` serves
// from node:http; `fastify` from a Fastify route, as the gateway does. What the gateway costs beyond
// these is its own per-call work, not its stack.
//
//   node <transpiled minimal-relay.mjs> <listen port> <upstream port> <undici|fastify>
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { Pool } from 'undici';

export type RelayKind = 'undici' | 'fastify';
export const RELAY_KINDS: readonly RelayKind[] = ['undici', 'fastify'];

const UPSTREAM_HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-sandbox' };

// Written here rather than imported from src/upstreams/http.ts: the script runs transpiled on its
// own, and a reference for the stack must not carry the gateway's own code (its pool's wait queue).

/** POSTs `body` to the chat path and resolves with the answer's text (a non-2xx answer rejects). */
export function postChat(pool: Pool, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = 0;
    pool.dispatch(
      { method: 'POST', path: '/v1/chat/completions', headers: UPSTREAM_HEADERS, body },
      {
        onConnect() {},
        onError: reject,
        onHeaders(statusCode) {
          status = statusCode;
          return true;
        },
        onData(chunk) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          const text = Buffer.concat(chunks).toString();
          if (status >= 200 && status < 300) resolve(text);
          else reject(new Error(`upstream answered ${status}: ${text.slice(0, 200)}`));
        },
      },
    );
  });
}

/** One chat call relayed: the caller's request in, the upstream's answer out, both parsed. */
async function relayChat(pool: Pool, request: Record<string, unknown>): Promise<unknown> {
  return JSON.parse(await postChat(pool, JSON.stringify({ ...request, stream: false })));
}

export interface Relay {
  port: number;
  close(): Promise<void>;
}

export async function startMinimalRelay(kind: RelayKind, listenPort: number, upstreamPort: number): Promise<Relay> {
  const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 256 });
  if (kind === 'fastify') {
    const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 });
    app.post('/v1/chat/completions', async (request) => relayChat(pool, request.body as Record<string, unknown>));
    await app.listen({ port: listenPort, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    return { port, close: async () => void (await Promise.all([app.close(), pool.close()])) };
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      relayChat(pool, JSON.parse(Buffer.concat(chunks).toString()))
        .then((answer) => {
          const text = JSON.stringify(answer);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { port, close: async () => void (await Promise.all([new Promise((resolve) => server.close(resolve)), pool.close()])) };
}

/** A relay run as a script: says where it listens (the bench waits for that line), and closes on SIGTERM or SIGINT. */
export function serveUntilStopped(name: string, relay: Relay): void {
  process.stderr.write(`${name} listening on http://127.0.0.1:${relay.port}\n`);
  const stop = () => void relay.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

// Run as a script (the bench starts it as its own process, as it does the floor).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [listenPort, upstreamPort] = process.argv.slice(2, 4).map(Number);
  const kind = process.argv[4] as RelayKind;
  if (!listenPort || !upstreamPort || !RELAY_KINDS.includes(kind)) {
    process.stderr.write('usage: minimal-relay <listen port> <upstream port> <undici|fastify>\n');
    process.exit(2);
  }
  serveUntilStopped(`${kind} relay`, await startMinimalRelay(kind, listenPort, upstreamPort));
}
