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

/** Opens a raw connection, writes `first`, then nothing more; resolves when the server ends it. */
function stall(url: string, first: string): Promise<{ closedAfterMs: number; answer: string }> {
  return trickle(url, first, 1_000_000);
}

/** Writes `first`, waits `pauseMs`, writes `rest`; resolves with the answer once the server ends the connection. */
function pauseThenFinish(url: string, first: string, pauseMs: number, rest: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let answer = '';
    const socket: Socket = connect(Number(port), hostname, () => {
      socket.write(first);
      setTimeout(() => socket.write(rest), pauseMs);
    });
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (/\r\n\r\n[\s\S]*\}$/.test(answer)) socket.end();
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(answer));
  });
}

describe('a body that stalls', () => {
  let gw: TestGateway;
  before(async () => {
    // The whole-request timeout stays long (uploads); the body timeout is short.
    gw = await startTestGateway({ limits: { body_timeout_ms: 1_000 } });
  });
  after(() => gw.close());

  test('half a JSON body and then nothing is answered 408 within the body timeout', async () => {
    const { key } = await gw.account();
    const half = '{"model":"sandbox-chat",';
    const cut = await stall(
      gw.url,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${half.length * 2}\r\n\r\n${half}`,
    );
    assert.ok(cut.closedAfterMs >= 1_000 && cut.closedAfterMs < 2_500, `closed after ${cut.closedAfterMs} ms`);
    assert.match(cut.answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.match(cut.answer, /\r\nconnection: close\r\n/i);
    assert.match(cut.answer, /\r\n\r\n\{"error":"the request body was not received within 1 s","type":"invalid_request_error"\}$/);
  });

  test('an upload that pauses longer than the body timeout is still received whole', async () => {
    const { key } = await gw.account();
    const boundary = 'b0undary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(2_000)}\r\n--${boundary}--\r\n`;
    const head = `POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const answer = await pauseThenFinish(gw.url, head + body.slice(0, 1_000), 1_600, body.slice(1_000));
    assert.match(answer, /^HTTP\/1\.1 201 Created\r\n/);
    assert.match(answer, /"bytes":2000/);
  });
});
