import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { type Call, HTTP_TARGETS, PLAIN_TARGETS, STREAM_TARGETS, type StreamTarget, type Target } from './fault-targets.js';
import { addFault, clearSandbox, loggedRequests, pollUntil, readUntilCut } from './sandbox-client.js';

// Each fault on each HTTP call of each kind (fault-targets.ts), as the client sees it. AST, a WebSocket, has
// its own file: ast-faults.test.ts.

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

/** Prepares the call, then aims the rule at exactly it: its kind and its own path. */
async function faulted(target: Target, rule: object): Promise<Call> {
  const call = await target.prepare(sandbox.url);
  await addFault(sandbox.url, { kind: target.kind, path: call.path, ...rule });
  return call;
}

/** The requests log's entry for the call: the newest request to its path. */
async function entryOf(call: Call): Promise<any> {
  return (await loggedRequests(sandbox.url)).filter((entry) => entry.path === call.path).at(-1);
}

/** Sends the call and reads its stream to the end or the break, split into the chunks the sandbox wrote. */
async function streamed(target: StreamTarget, call: Call) {
  const res = await call.send();
  const { text, cut } = await readUntilCut(res);
  return { status: res.status, cut, chunks: target.chunks(text) };
}

for (const target of HTTP_TARGETS) {
  test(`a status rule with headers answers that status with those headers: ${target.name}`, async () => {
    const call = await faulted(target, { status: 429, headers: { 'retry-after': '7' } });
    const res = await call.send();
    await res.arrayBuffer();
    assert.deepEqual([res.status, res.headers.get('retry-after')], [429, '7']);
  });

  test(`reset ends the connection with ECONNRESET before any byte of an answer: ${target.name}`, async () => {
    const call = await faulted(target, { reset: true });
    // a rejection, not a Response: not even a status line arrived
    await assert.rejects(call.send(), (error: any) => error.cause?.code === 'ECONNRESET');
    assert.equal((await entryOf(call)).aborted, false, 'the sandbox cut it, not the client');
  });

  test(`hang leaves the request unanswered until the client leaves: ${target.name}`, async () => {
    const call = await faulted(target, { hang: true });
    const client = new AbortController();
    let answered = false;
    const pending = call.send(client.signal).then(() => (answered = true));
    await pollUntil(() => entryOf(call));
    // one more round trip: an answer, had there been one, would have been written before this one
    await loggedRequests(sandbox.url);
    assert.equal(answered, false);
    client.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await pollUntil(async () => ((await entryOf(call)).aborted ? true : undefined));
  });
}

for (const target of PLAIN_TARGETS) {
  test(`malformed answers 200 with a JSON content type and a body that does not parse: ${target.name}`, async () => {
    const call = await faulted(target, { malformed: true });
    const res = await call.send();
    const text = await res.text();
    assert.deepEqual([res.status, res.headers.get('content-type')], [200, 'application/json']);
    assert.throws(() => JSON.parse(text), SyntaxError);
  });
}

for (const target of STREAM_TARGETS) {
  test(`malformed sends one whole chunk whose JSON does not parse, then ends cleanly without the end marker: ${target.name}`, async () => {
    const { status, cut, chunks } = await streamed(target, await faulted(target, { malformed: true }));
    assert.deepEqual([status, cut, chunks.length], [200, false, 1]);
    assert.match(chunks[0] as string, /\n$/, 'the chunk keeps its framing');
    assert.throws(() => target.payload(chunks[0] as string), SyntaxError);
    assert.equal(target.isEnd(chunks[0] as string), false);
  });

  test(`error_after_chunks sends that many chunks, then the protocol's error, and ends without the end marker: ${target.name}`, async () => {
    const { status, cut, chunks } = await streamed(target, await faulted(target, { error_after_chunks: 3 }));
    const errors = chunks.slice(3).map((chunk) => target.summary(target.payload(chunk)));
    assert.deepEqual([status, cut, errors], [200, false, target.expectedError(3)]);
    chunks.slice(0, 3).forEach((chunk) => target.payload(chunk)); // the three before it are whole
    assert.equal(chunks.some(target.isEnd), false);
  });

  test(`error_after_chunks past the stream's length sends the error in place of the end marker: ${target.name}`, async () => {
    const { cut, chunks } = await streamed(target, await faulted(target, { error_after_chunks: 1000 }));
    const sent = chunks.length - target.expectedError(0).length;
    const errors = chunks.slice(sent).map((chunk) => target.summary(target.payload(chunk)));
    assert.deepEqual([cut, errors], [false, target.expectedError(sent)]);
    assert.ok(sent > 3, `${sent} chunks before the error`);
    assert.equal(chunks.some(target.isEnd), false);
  });

  test(`drop_after_chunks sends that many whole chunks, then cuts the connection: ${target.name}`, async () => {
    const call = await faulted(target, { drop_after_chunks: 3 });
    const { status, cut, chunks } = await streamed(target, call);
    assert.deepEqual([status, cut, chunks.length], [200, true, 3]);
    chunks.forEach((chunk) => target.payload(chunk));
    assert.equal((await entryOf(call)).aborted, false, 'the sandbox cut it, not the client');
  });

  test(`drop_after_chunks past the stream's length cuts the connection in place of the end marker: ${target.name}`, async () => {
    const { cut, chunks } = await streamed(target, await faulted(target, { drop_after_chunks: 1000 }));
    assert.deepEqual([cut, chunks.some(target.isEnd)], [true, false]);
    assert.ok(chunks.length > 3, `${chunks.length} chunks before the cut`);
  });
}
