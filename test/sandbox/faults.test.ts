import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { AUTH, addFault, clearSandbox, loggedRequests, pollUntil, postChat, postJson, readUntilCut } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const chatUrl = () => `${sandbox.url}/v1/chat/completions`;
const HELLO = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }] };
const LONG_STREAM = { model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:50]]' }], stream: true };

test('a status rule answers that status with the body given', async () => {
  await addFault(sandbox.url, { kind: 'chat', status: 429, body: { error: { message: 'slow down', type: 'requests' } } });
  const { status, body } = await postChat(sandbox.url, HELLO);
  assert.deepEqual([status, body], [429, { error: { message: 'slow down', type: 'requests' } }]);
});

test('a status rule without a body answers an OpenAI error body', async () => {
  await addFault(sandbox.url, { status: 503 });
  const { status, body } = await postChat(sandbox.url, HELLO);
  assert.deepEqual([status, body], [503, { error: { message: 'sandbox fault: status 503', type: 'server_error', param: null, code: null } }]);
});

test('a string body is sent as text, like a proxy error page', async () => {
  await addFault(sandbox.url, { status: 502, body: '<html>Bad Gateway</html>' });
  const res = await postJson(chatUrl(), HELLO);
  assert.deepEqual([res.status, res.headers.get('content-type'), await res.text()], [502, 'text/plain', '<html>Bad Gateway</html>']);
});

test('a rule with times applies that many times, then requests are answered normally', async () => {
  await addFault(sandbox.url, { status: 500, times: 2 });
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await postChat(sandbox.url, HELLO)).status);
  assert.deepEqual(statuses, [500, 500, 200]);
  const listed = (await (await fetch(`${sandbox.url}/__sandbox/faults`)).json()) as { data: unknown[] };
  assert.deepEqual(listed.data, []);
});

test('the faults list shows each rule with its id and the times it has left', async () => {
  const id = await addFault(sandbox.url, { model: 'm', status: 500, times: 3 });
  await postChat(sandbox.url, { ...HELLO, model: 'm' });
  const listed = await (await fetch(`${sandbox.url}/__sandbox/faults`)).json();
  assert.deepEqual(listed, { data: [{ id, model: 'm', status: 500, times: 2 }] });
});

test('a rule without times lasts until the faults are cleared', async () => {
  await addFault(sandbox.url, { status: 500 });
  assert.deepEqual([(await postChat(sandbox.url, HELLO)).status, (await postChat(sandbox.url, HELLO)).status], [500, 500]);
  const cleared = await (await fetch(`${sandbox.url}/__sandbox/faults`, { method: 'DELETE' })).json();
  assert.deepEqual([cleared, (await postChat(sandbox.url, HELLO)).status], [{ deleted: 1 }, 200]);
});

test('a delay rule answers normally after waiting at least delay_ms', async () => {
  await addFault(sandbox.url, { delay_ms: 150 });
  const started = performance.now();
  const { status, body } = await postChat(sandbox.url, HELLO);
  const elapsed = performance.now() - started;
  assert.equal(status, 200);
  assert.equal(body.choices[0].message.content, 'Sandbox says: hello');
  assert.ok(elapsed >= 145, `answered after ${elapsed} ms`);
});

test('a hanging request is never answered and is logged as aborted once the client leaves', async () => {
  await addFault(sandbox.url, { hang: true });
  const client = new AbortController();
  const pending = postJson(chatUrl(), HELLO, AUTH, client.signal);
  const entry = await pollUntil(async () => (await loggedRequests(sandbox.url))[0]);
  assert.equal(entry.aborted, false);
  client.abort();
  await assert.rejects(pending, { name: 'AbortError' });
  await pollUntil(async () => ((await loggedRequests(sandbox.url))[0].aborted ? true : undefined));
});

test('drop_after_chunks sends that many events of a stream, then cuts the connection', async () => {
  await addFault(sandbox.url, { drop_after_chunks: 3 });
  const res = await postJson(chatUrl(), LONG_STREAM);
  const { text, cut } = await readUntilCut(res);
  assert.equal(res.status, 200);
  assert.equal(cut, true);
  assert.equal(text.split('\n\n').filter(Boolean).length, 3);
  assert.ok(text.endsWith('\n\n'));
  // the sandbox cut it, not the client
  assert.equal((await loggedRequests(sandbox.url))[0].aborted, false);
});

test('drop_after_chunks 0 sends the stream headers and no event', async () => {
  await addFault(sandbox.url, { drop_after_chunks: 0 });
  const res = await postJson(chatUrl(), LONG_STREAM);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  assert.deepEqual(await readUntilCut(res), { text: '', cut: true });
});

test('drop_after_chunks on a plain request closes the connection without an answer', async () => {
  await addFault(sandbox.url, { drop_after_chunks: 2 });
  await assert.rejects(postJson(chatUrl(), HELLO), TypeError);
});

test('a client that leaves mid-stream is logged as aborted', async () => {
  await addFault(sandbox.url, { chunk_delay_ms: 20 });
  const client = new AbortController();
  const res = await postJson(chatUrl(), LONG_STREAM, AUTH, client.signal);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  assert.match(new TextDecoder().decode(first.value), /^data: /);
  client.abort();
  await pollUntil(async () => ((await loggedRequests(sandbox.url))[0].aborted ? true : undefined));
});

test('a model selector applies the rule only to requests for that model', async () => {
  await addFault(sandbox.url, { model: 'flaky-model', status: 503 });
  const other = await postChat(sandbox.url, HELLO);
  const flaky = await postChat(sandbox.url, { ...HELLO, model: 'flaky-model' });
  assert.deepEqual([other.status, flaky.status], [200, 503]);
});

test('a path selector matches by prefix and a kind selector by equality', async () => {
  await addFault(sandbox.url, { path: '/v1/messages', status: 500 });
  await addFault(sandbox.url, { kind: 'messages', status: 500 });
  assert.equal((await postChat(sandbox.url, HELLO)).status, 200);
  await addFault(sandbox.url, { kind: 'chat', path: '/v1/chat', status: 418, times: 1 });
  assert.equal((await postChat(sandbox.url, HELLO)).status, 418);
});

test('a rule with an unknown or mistyped field is refused with 400', async () => {
  const typo = await postJson(`${sandbox.url}/__sandbox/faults`, { stauts: 500 }, { 'content-type': 'application/json' });
  const mistyped = await postJson(`${sandbox.url}/__sandbox/faults`, { delay_ms: '100' }, { 'content-type': 'application/json' });
  assert.deepEqual([typo.status, mistyped.status], [400, 400]);
  assert.match(((await typo.json()) as any).error.message, /^stauts: unknown field/);
  assert.equal(((await mistyped.json()) as any).error.message, 'delay_ms: expected a non-negative integer');
});

test("headers ride on a normal answer and on a stream's head, replacing the protocol's own of that name", async () => {
  await addFault(sandbox.url, { kind: 'chat', headers: { 'X-Sandbox-Region': 'test', 'x-request-id': 'req_fault' } });
  const plain = await postJson(chatUrl(), HELLO);
  const stream = await postJson(chatUrl(), LONG_STREAM);
  const seen = (res: Response) => [res.status, res.headers.get('x-sandbox-region'), res.headers.get('x-request-id')];
  assert.deepEqual(
    [seen(plain), seen(stream)],
    [
      [200, 'test', 'req_fault'],
      [200, 'test', 'req_fault'],
    ],
  );
  assert.equal(((await plain.json()) as any).choices[0].message.content, 'Sandbox says: hello');
  assert.match(await stream.text(), /data: \[DONE\]\n\n$/);
});

test('error_after_chunks leaves an answer that is not a stream whole', async () => {
  await addFault(sandbox.url, { kind: 'chat', error_after_chunks: 0 });
  const { status, body } = await postChat(sandbox.url, HELLO);
  assert.deepEqual([status, body.choices[0].message.content], [200, 'Sandbox says: hello']);
});

test('malformed keeps the status of the answer it breaks', async () => {
  await addFault(sandbox.url, { kind: 'chat', status: 429, malformed: true });
  const res = await postJson(chatUrl(), HELLO);
  const whole = JSON.stringify({ error: { message: 'sandbox fault: status 429', type: 'requests', param: null, code: null } });
  assert.deepEqual([res.status, await res.text()], [429, whole.slice(0, whole.length / 2)]);
});

test('a headers rule with a framing header or a value that cannot be sent is refused with 400', async () => {
  const refused = async (headers: unknown) => {
    const res = await postJson(`${sandbox.url}/__sandbox/faults`, { headers }, { 'content-type': 'application/json' });
    return [res.status, ((await res.json()) as any).error.message];
  };
  const message = 'headers: expected an object of header names to string values, framing headers excepted';
  assert.deepEqual(
    [await refused({ 'Content-Length': '3' }), await refused({ 'x-a': 'one\r\ntwo' }), await refused({ 'retry-after': 7 })],
    [
      [400, message],
      [400, message],
      [400, message],
    ],
  );
});

const postRule = async (body: string, contentType = 'application/json') => {
  const res = await fetch(`${sandbox.url}/__sandbox/faults`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.status, error: ((await res.json()) as { error: { message: string; param: string | null } }).error };
};

test('an empty body or one that is not JSON is refused with 400, and stores no rule', async () => {
  const empty = await postRule('');
  const form = await postRule('status=500', 'application/x-www-form-urlencoded');
  const broken = await postRule('{"status":');
  assert.deepEqual([empty.status, form.status, broken.status], [400, 400, 400]);
  assert.match(empty.error.message, /expected a JSON body/);
  assert.match(form.error.message, /expected a JSON body/);
  assert.match(broken.error.message, /^invalid JSON body/);
  assert.deepEqual(((await (await fetch(`${sandbox.url}/__sandbox/faults`, { headers: AUTH })).json()) as { data: unknown[] }).data, []);
});

test('a rule with selectors and no behaviour is refused with 400 naming what it lacks', async () => {
  const selectorsOnly = await postRule(JSON.stringify({ kind: 'chat', model: 'sandbox-chat', times: 2 }));
  assert.equal(selectorsOnly.status, 400);
  assert.match(selectorsOnly.error.message, /does nothing; give at least one of status, headers, delay_ms/);
});

test('a body without a status is refused with 400 naming the body', async () => {
  const refused = await postRule(JSON.stringify({ kind: 'chat', body: { error: { message: 'down' } } }));
  assert.deepEqual([refused.status, refused.error.param], [400, 'body']);
});

test('a refused field is named in the error param', async () => {
  const typo = await postRule(JSON.stringify({ stauts: 500 }));
  const mistyped = await postRule(JSON.stringify({ delay_ms: -1 }));
  assert.deepEqual([typo.error.param, mistyped.error.param], ['stauts', 'delay_ms']);
});
