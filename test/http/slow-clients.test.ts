// Slow clients (slowloris): a request whose headers or body trickle in is cut off by the server's
// own timeouts, so idle connections cannot pile up; a normal client on the side is served meanwhile.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** Opens a raw connection, writes `first`, then one byte every `everyMs`; resolves when the server ends it. */
function trickle(url: string, first: string, everyMs: number): Promise<{ closedAfterMs: number; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const startedAt = Date.now();
    let answer = '';
    const socket: Socket = connect(Number(port), hostname, () => socket.write(first));
    const timer = setInterval(() => socket.writable && socket.write('x'), everyMs);
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ closedAfterMs: Date.now() - startedAt, answer });
    });
  });
}

describe('slow clients', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ limits: { headers_timeout_ms: 1_000, receive_timeout_ms: 2_000 } });
  });
  after(() => gw.close());

  const timedOut = /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*\r\n\r\n\{"error":"the request was not received in time","type":"invalid_request_error"\}$/;

  test('headers trickled past the headers timeout are cut off with a 408 in the error shape', async () => {
    const cut = await trickle(gw.url, 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ', 200);
    assert.ok(cut.closedAfterMs < 4_000, `closed after ${cut.closedAfterMs} ms`);
    assert.match(cut.answer, timedOut);
  });

  test('a body trickled past the receive timeout is cut off, while another client is served', async () => {
    const { key } = await gw.account();
    const slow = trickle(
      gw.url,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      200,
    );
    const res = await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'meanwhile' }] });
    assert.equal(res.status, 200);
    const cut = await slow;
    assert.ok(cut.closedAfterMs < 5_000, `closed after ${cut.closedAfterMs} ms`);
    assert.match(cut.answer, timedOut);
  });
});
