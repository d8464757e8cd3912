// A real webhook receiver on 127.0.0.1 for the deliverer's tests: records every request as
// received (raw body, headers, arrival time) and answers as the test scripts it.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** performance.now() at arrival. */
  arrivedAt: number;
}

/** How to answer one request: a status, or 'hang' (never answer). */
export type Answer = number | 'hang' | ((res: ServerResponse) => void);

export interface Receiver {
  url(path?: string): string;
  received: Received[];
  /** Answers for the next requests, in order; after them, `fallback`. */
  script(...answers: Answer[]): void;
  fallback: Answer;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const queue: Answer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8'), arrivedAt: performance.now() });
      const answer = queue.shift() ?? receiver.fallback;
      if (answer === 'hang') return;
      if (typeof answer === 'function') answer(res);
      else res.writeHead(answer).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    received,
    script: (...answers) => queue.push(...answers),
    fallback: 200,
    async waitFor(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver: ${received.length} of ${count} requests after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  return receiver;
}
