// Uploads that never end: a multipart body that stalls, or stops without its closing boundary, is
// answered within the receive timeout (408, or 400 when the body ended), and nothing of it stays on
// disk, in the files folder or the upload spool, for either upload route.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const BOUNDARY = 'unended-upload-boundary';
const RECEIVE_TIMEOUT_MS = 1_500;
const ROUTES = ['/v1/files', '/v1/audio/translations'] as const;

/** The file part's head and `bytes` of its content: never the closing boundary. */
function partialBody(route: string, bytes: number): Buffer {
  const fields = route === '/v1/audio/translations' ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nsandbox-ast\r\n` : '';
  const head = `${fields}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), Buffer.alloc(bytes, 7)]);
}

/** A raw client: the request head, then what the test writes; collects the answer until the socket closes. */
async function rawUpload(gw: TestGateway, key: string, route: string, head: Record<string, string>): Promise<{ socket: Socket; answer: Promise<string> }> {
  const { port } = new URL(gw.url);
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  const lines = [`POST ${route} HTTP/1.1`, 'Host: 127.0.0.1', `Authorization: Bearer ${key}`, `Content-Type: multipart/form-data; boundary=${BOUNDARY}`];
  for (const [name, value] of Object.entries(head)) lines.push(`${name}: ${value}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  socket.on('error', () => {}); // a reset after the answer is the server closing on an unended body
  const answer = new Promise<string>((resolve) => socket.once('close', () => resolve(text)));
  return { socket, answer };
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

describe('uploads that never end', () => {
  let gw: TestGateway;
  const leftovers = () =>
    ['files', 'uploads'].flatMap((folder) => {
      try {
        return readdirSync(path.join(gw.dataDir, folder)).map((name) => `${folder}/${name}`);
      } catch {
        return [];
      }
    });
  before(async () => {
    // below the headers timeout (10 s): the receive timeout alone must cut a stalled body
    gw = await startTestGateway({ limits: { receive_timeout_ms: RECEIVE_TIMEOUT_MS } });
  });
  after(async () => {
    await gw.close();
  });

  for (const route of ROUTES) {
    test(`${route}: a body that stalls inside the file is answered 408 within the receive timeout, and its bytes are deleted`, async () => {
      const { key } = await gw.account();
      const { socket, answer } = await rawUpload(gw, key, route, { 'Content-Length': String(10 * 1024 * 1024) });
      const started = Date.now();
      socket.write(partialBody(route, 256 * 1024));
      // the bytes reached the disk before the stall
      await eventually(() => leftovers().length > 0);
      const [first] = await once(socket, 'data');
      const tookMs = Date.now() - started;
      const text = String(first);
      await answer; // and the connection is closed
      assert.equal(statusOf(text), 408, text.slice(0, 200));
      assert.ok(tookMs < RECEIVE_TIMEOUT_MS + 2_500, `answered after ${tookMs} ms`);
      await eventually(() => leftovers().length === 0, 3_000);
      assert.deepEqual(leftovers(), []);
    });

    test(`${route}: a body that ends without its closing boundary is answered 400, and its bytes are deleted`, async () => {
      const { key } = await gw.account();
      const { socket, answer } = await rawUpload(gw, key, route, { 'Transfer-Encoding': 'chunked' });
      const body = partialBody(route, 64 * 1024);
      socket.write(`${body.length.toString(16)}\r\n`);
      socket.write(body);
      socket.write('\r\n0\r\n\r\n');
      const first = await Promise.race([once(socket, 'data'), answer.then(() => undefined)]);
      socket.destroy();
      const text = first ? String(first[0]) : await answer;
      assert.equal(statusOf(text), 400, text.slice(0, 300));
      await eventually(() => leftovers().length === 0, 3_000);
      assert.deepEqual(leftovers(), []);
    });

    test(`${route}: a client that closes its connection inside the file leaves none of its bytes on disk`, async () => {
      const { key } = await gw.account();
      const { socket } = await rawUpload(gw, key, route, { 'Content-Length': String(10 * 1024 * 1024) });
      socket.write(partialBody(route, 256 * 1024));
      await eventually(() => leftovers().length > 0);
      socket.destroy();
      await eventually(() => leftovers().length === 0, 3_000);
      assert.deepEqual(leftovers(), []);
    });
  }
});
