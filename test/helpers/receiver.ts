// A real local webhook receiver: records every delivery with its raw body and whether its
// signature verified, and answers with the statuses a test scripts.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { verifyWebhook } from '../../src/index.js';

export interface Delivery {
  headers: IncomingHttpHeaders;
  rawBody: string;
  payload: any;
  verified: boolean;
  receivedAt: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Statuses to answer, in order; after they run out, 200. */
  answers: number[];
  /** The body every answer carries; empty unless a test sets it. */
  answerBody: string;
  secret: string;
  close(): Promise<void>;
}

export async function startReceiver(secret = ''): Promise<Receiver> {
  const receiver: Receiver = { url: '', deliveries: [], answers: [], answerBody: '', secret, close: async () => {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      receiver.deliveries.push({
        headers: req.headers,
        rawBody,
        payload: JSON.parse(rawBody),
        verified: verifyWebhook(receiver.secret, req.headers, rawBody),
        receivedAt: Date.now(),
      });
      res.statusCode = receiver.answers.shift() ?? 200;
      res.end(receiver.answerBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
