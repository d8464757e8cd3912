import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { AUTH, addFault, clearSandbox, loggedRequests, postTo } from './sandbox-client.js';

const TASK_MS = 600;
let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0, taskMs: TASK_MS });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const submit = (body: unknown, headers: Record<string, string> = AUTH) => postTo(`${sandbox.url}/api/v1/tools/erase-subtitle`, body, headers);

async function read(id: string, headers: Record<string, string> = AUTH) {
  const res = await fetch(`${sandbox.url}/api/v1/tasks/${id}`, { headers });
  return { status: res.status, body: (await res.json()) as any };
}

/** Each status the task shows, in order, polled until it ends (or the deadline passes). */
async function statusesUntilDone(id: string): Promise<{ statuses: string[]; last: any }> {
  const deadline = Date.now() + 5000;
  const statuses: string[] = [];
  for (;;) {
    const { body } = await read(id);
    if (statuses.at(-1) !== body.status) statuses.push(body.status);
    if (body.status !== 'running') return { statuses, last: body };
    if (Date.now() > deadline) throw new Error(`task ${id} still running after 5000 ms`);
    await delay(5); // a poll interval, not a wait for the result
  }
}

test('a submit answers a running task that completes with the erased video and its duration', async () => {
  const { status, body } = await submit({ video_url: 'https://files.example/clip.mp4?duration_s=42' });
  assert.equal(status, 200);
  const id = body.task_id;
  assert.match(id, /^amk-[0-9a-f]{16}\d{4}$/);
  assert.deepEqual(body, { success: true, task_id: id, status: 'running', request_id: body.request_id });
  assert.match(body.request_id, /^req-[0-9a-f]{20}$/);
  const { statuses, last } = await statusesUntilDone(id);
  assert.deepEqual(statuses, ['running', 'completed']);
  assert.deepEqual(last, {
    success: true,
    task_id: id,
    status: 'completed',
    result: { video_url: `${sandbox.url}/__media/erase-${id}.mp4`, duration: 42 },
    request_id: last.request_id,
  });
  const video = await fetch(last.result.video_url);
  assert.deepEqual([video.status, video.headers.get('content-type')], [200, 'video/mp4']);
  assert.equal(
    Buffer.from(await video.arrayBuffer())
      .subarray(4, 8)
      .toString('latin1'),
    'ftyp',
  );
});

test('a video URL without duration_s counts as 5 s', async () => {
  const { body } = await submit({ video_url: 'https://files.example/clip.mp4' });
  assert.equal((await statusesUntilDone(body.task_id)).last.result.duration, 5);
});

test('a task_outcome fault fails as many tasks as its times', async () => {
  await addFault(sandbox.url, { kind: 'erase', task_outcome: 'failed', times: 1 });
  const failed = await statusesUntilDone((await submit({ video_url: 'https://files.example/a.mp4' })).body.task_id);
  const next = await statusesUntilDone((await submit({ video_url: 'https://files.example/a.mp4' })).body.task_id);
  assert.deepEqual(failed.statuses, ['running', 'failed']);
  assert.deepEqual(failed.last, {
    success: true,
    task_id: failed.last.task_id,
    status: 'failed',
    error: { code: 'ProcessFailed', message: 'subtitle erase failed (sandbox fault: task_outcome failed)' },
    request_id: failed.last.request_id,
  });
  assert.equal(next.last.status, 'completed');
});

test('the same client_token names the same task', async () => {
  const first = await submit({ video_url: 'https://files.example/a.mp4', client_token: 'tok-1' });
  const retried = await submit({ video_url: 'https://files.example/a.mp4', client_token: 'tok-1' });
  const other = await submit({ video_url: 'https://files.example/a.mp4', client_token: 'tok-2' });
  assert.equal(first.body.task_id, retried.body.task_id);
  assert.notEqual(first.body.task_id, other.body.task_id);
});

test('a missing key, a missing video_url and an unknown task are refused in the MediaKit shape', async () => {
  const noKey = await submit({ video_url: 'https://files.example/a.mp4' }, { 'content-type': 'application/json' });
  const noUrl = await submit({});
  const unknown = await read('amk-nope');
  assert.deepEqual(
    [noKey, noUrl, unknown].map(({ status, body }) => [status, body.success, body.error]),
    [
      [401, false, { code: 'Unauthorized', message: 'Missing bearer token: send Authorization: Bearer <key>' }],
      [400, false, { code: 'InvalidParameter', message: 'video_url: required, an http(s) URL' }],
      [404, false, { code: 'TaskNotFound', message: 'task amk-nope not found' }],
    ],
  );
  assert.equal((await read('amk-nope', {})).status, 401);
});

test('a status fault applies to queries too', async () => {
  const { body } = await submit({ video_url: 'https://files.example/a.mp4' });
  await addFault(sandbox.url, { kind: 'erase', status: 502, times: 1 });
  const faulted = await read(body.task_id);
  assert.deepEqual(faulted, {
    status: 502,
    body: { success: false, error: { code: 'InternalError', message: 'sandbox fault: status 502' }, request_id: 'req-sandbox-fault' },
  });
  assert.equal((await read(body.task_id)).status, 200);
});

test('submits and queries are logged with the kind erase', async () => {
  const { body } = await submit({ video_url: 'https://files.example/a.mp4' });
  await read(body.task_id);
  const logged = (await loggedRequests(sandbox.url)).map((r) => [r.kind, r.method, r.path]);
  assert.deepEqual(logged, [
    ['erase', 'POST', '/api/v1/tools/erase-subtitle'],
    ['erase', 'GET', `/api/v1/tasks/${body.task_id}`],
  ]);
});
