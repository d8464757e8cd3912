// A real webhook receiver on 127.0.0.1 for the deliverer's tests: records every request as
// received (raw body, headers, arrival time) and answers as the test scripts it; counts the
// requests it holds open (a tarpit's slots in use).
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** performance.now() at arrival. */
  arrivedAt: number;
  /** Date.now() at arrival, to compare with the outbox's times. */
  arrivedAtEpochMs: number;
}

/** How to answer one request: a status, or 'hang' (never answer, until the sender gives up). */
export type Answer = number | 'hang' | ((res: ServerResponse, request: Received) => void);

export interface Receiver {
  url(path?: string): string;
  received: Received[];
  /** Answers for the next requests, in order; after them, `fallback`. */
  script(...answers: Answer[]): void;
  fallback: Answer;
  /** Requests arrived and not yet answered or abandoned by the sender. */
  open(): number;
  /** The most requests open at once. */
  peakOpen(): number;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const queue: Answer[] = [];
  let open = 0;
  let peakOpen = 0;
  const server = createServer((req, res) => {
    open += 1;
    peakOpen = Math.max(peakOpen, open);
    // 'close' once answered, or once the sender gave up and closed the connection
    res.once('close', () => {
      open -= 1;
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        arrivedAt: performance.now(),
        arrivedAtEpochMs: Date.now(),
      };
      received.push(request);
      const answer = queue.shift() ?? receiver.fallback;
      if (answer === 'hang') return;
      if (typeof answer === 'function') answer(res, request);
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
    open: () => open,
    peakOpen: () => peakOpen,
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
