import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import WebSocket from 'ws';
import { decodeTranslateResponse, ProtoDecodeError } from '../../src/sandbox/ast-proto.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { AST_HEADERS, audio, exchangeFrames, finish, refusedUpgrade, startSession, wsUrl } from './ast-client.js';
import { addFault, clearSandbox, loggedRequests, pollUntil } from './sandbox-client.js';

// The fault matrix (fault-matrix.test.ts) for AST, whose upstream is a WebSocket of protobuf frames: the
// faults before the session act on the upgrade, the stream faults on the frames.

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const SESSION = () => [startSession({ mode: 's2t', target_language: 'zh' }), audio(3200), finish()];
const SESSION_FAILED = 153;
const SESSION_FINISHED = 152;

/** A whole session under the rule: the events of the frames received, each decoded, and the close code. */
async function session(rule: object) {
  await addFault(sandbox.url, { kind: 'ast', ...rule });
  const { frames, closeCode } = await exchangeFrames(wsUrl(sandbox.url), SESSION());
  return { responses: frames.map((frame) => decodeTranslateResponse(frame)), closeCode };
}

test('a status rule with headers refuses the upgrade with that status and those headers', async () => {
  await addFault(sandbox.url, { kind: 'ast', status: 429, headers: { 'retry-after': '7' } });
  const { status, headers } = await refusedUpgrade(wsUrl(sandbox.url), AST_HEADERS);
  assert.deepEqual([status, headers['retry-after']], [429, '7']);
});

test('headers without a status ride on the 101 of an upgrade that goes on normally', async () => {
  await addFault(sandbox.url, { kind: 'ast', headers: { 'x-sandbox-region': 'test' } });
  const ws = new WebSocket(wsUrl(sandbox.url), { headers: AST_HEADERS });
  const [res] = (await once(ws, 'upgrade')) as [IncomingMessage];
  assert.equal(res.headers['x-sandbox-region'], 'test');
  ws.close();
});

test('reset ends the upgrade with ECONNRESET and no answer', async () => {
  await addFault(sandbox.url, { kind: 'ast', reset: true });
  const ws = new WebSocket(wsUrl(sandbox.url), { headers: AST_HEADERS });
  ws.on('unexpected-response', () => assert.fail('an HTTP answer arrived'));
  const [error] = (await once(ws, 'error')) as [NodeJS.ErrnoException];
  assert.equal(error.code, 'ECONNRESET');
  assert.equal((await loggedRequests(sandbox.url))[0].aborted, false, 'the sandbox cut it, not the client');
});

test('hang leaves the upgrade unanswered until the client leaves', async () => {
  await addFault(sandbox.url, { kind: 'ast', hang: true });
  const ws = new WebSocket(wsUrl(sandbox.url), { headers: AST_HEADERS });
  let answered = false;
  ws.on('upgrade', () => (answered = true));
  ws.on('unexpected-response', () => (answered = true));
  ws.on('error', () => {});
  await pollUntil(async () => (await loggedRequests(sandbox.url))[0]);
  await loggedRequests(sandbox.url); // one more round trip: an answer, had there been one, came before it
  assert.equal(answered, false);
  ws.terminate();
  await pollUntil(async () => ((await loggedRequests(sandbox.url))[0].aborted ? true : undefined));
});

test('malformed sends one frame that does not decode, then closes without SessionFinished', async () => {
  await addFault(sandbox.url, { kind: 'ast', malformed: true });
  const { frames, closeCode } = await exchangeFrames(wsUrl(sandbox.url), SESSION());
  assert.deepEqual([frames.length, closeCode], [1, 1000]);
  assert.throws(() => decodeTranslateResponse(frames[0] as Buffer), ProtoDecodeError);
});

test('error_after_chunks sends that many frames, then SessionFailed with a server error, and closes', async () => {
  const { responses, closeCode } = await session({ error_after_chunks: 2 });
  const failed = { StatusCode: 55000000, Message: 'ServerInternalError (sandbox fault: error after 2 chunks)' };
  assert.deepEqual(
    [responses.map((r) => r.event), responses.at(-1)?.response_meta, closeCode],
    [[150, 651, SESSION_FAILED], { SessionID: 'sess-1', Sequence: 3, ...failed }, 1000],
  );
});

test('error_after_chunks past the session length sends SessionFailed in place of SessionFinished', async () => {
  const { responses, closeCode } = await session({ error_after_chunks: 1000 });
  assert.deepEqual([responses.map((r) => r.event), closeCode], [[150, 651, 652, 654, 655, 154, SESSION_FAILED], 1000]);
});

test('drop_after_chunks past the session length breaks the connection in place of SessionFinished', async () => {
  const { responses, closeCode } = await session({ drop_after_chunks: 1000 });
  assert.deepEqual([responses.some((r) => r.event === SESSION_FINISHED), responses.length, closeCode], [false, 6, 1006]);
});
