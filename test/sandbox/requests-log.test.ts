import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { RequestsLog } from '../../src/sandbox/requests-log.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { addFault, clearSandbox, loggedRequests, postJson } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

test('an upstream request is logged with its headers and body as received', async () => {
  const body = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5 };
  const headers = { authorization: 'Bearer upstream-key', 'content-type': 'application/json', 'x-trace': 'abc' };
  await (await postJson(`${sandbox.url}/v1/chat/completions?debug=1`, body, headers)).arrayBuffer();
  const [entry, ...rest] = await loggedRequests(sandbox.url);
  assert.deepEqual(rest, []);
  assert.deepEqual(
    { ...entry, headers: undefined },
    {
      kind: 'chat',
      method: 'POST',
      path: '/v1/chat/completions?debug=1',
      headers: undefined,
      body,
      aborted: false,
    },
  );
  assert.deepEqual(
    [entry.headers.authorization, entry.headers['content-type'], entry.headers['x-trace'], entry.headers['content-length']],
    ['Bearer upstream-key', 'application/json', 'abc', String(JSON.stringify(body).length)],
  );
});

test('requests are listed newest last, and sandbox control calls are not among them', async () => {
  await (await postJson(`${sandbox.url}/v1/chat/completions`, { model: 'a', messages: [] })).arrayBuffer();
  await addFault(sandbox.url, { status: 500, times: 1 });
  await (await postJson(`${sandbox.url}/v1/unknown`, { model: 'b' })).arrayBuffer();
  const entries = await loggedRequests(sandbox.url);
  assert.deepEqual(
    entries.map((e) => [e.kind, e.path, e.body.model]),
    [
      ['chat', '/v1/chat/completions', 'a'],
      [null, '/v1/unknown', 'b'],
    ],
  );
});

test('a body that is not JSON is logged as its text', async () => {
  await fetch(`${sandbox.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'plain words' }).then(
    (r) => r.arrayBuffer(),
  );
  assert.deepEqual(
    (await loggedRequests(sandbox.url)).map((e) => e.body),
    ['plain words'],
  );
});

test('DELETE clears the log', async () => {
  await (await postJson(`${sandbox.url}/v1/chat/completions`, {})).arrayBuffer();
  const cleared = await (await fetch(`${sandbox.url}/__sandbox/requests`, { method: 'DELETE' })).json();
  assert.deepEqual([cleared, await loggedRequests(sandbox.url)], [{ deleted: 1 }, []]);
});

test('the log keeps only the last 1000 requests', () => {
  const log = new RequestsLog();
  for (let i = 1; i <= 1001; i++) log.record({ kind: 'chat', method: 'POST', path: `/${i}`, headers: {}, body: null });
  const paths = log.list().map((e) => e.path);
  assert.deepEqual([paths.length, paths[0], paths.at(-1)], [1000, '/2', '/1001']);
});

test('a log told to stop keeping forgets what it holds and keeps nothing after', () => {
  const log = new RequestsLog();
  const entry = { kind: 'chat', method: 'POST', path: '/v1/chat/completions', headers: {}, body: { secret: 'prompt' } };
  log.record(entry as Parameters<RequestsLog['record']>[0]);
  assert.equal(log.list().length, 1);
  log.stopKeeping();
  log.record(entry as Parameters<RequestsLog['record']>[0]);
  assert.deepEqual(log.list(), []);
});
