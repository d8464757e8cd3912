import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { videoTokens } from '../../src/sandbox/video.js';
import { AUTH, addFault, clearSandbox, loggedRequests, postTo } from './sandbox-client.js';

const TASK_MS = 600;
let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0, taskMs: TASK_MS });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const tasksUrl = () => `${sandbox.url}/api/v3/contents/generations/tasks`;
const VIDEO = { model: 'sandbox-video', content: [{ type: 'text', text: 'a cat yawns' }] };

async function create(body: unknown = VIDEO): Promise<string> {
  const { status, body: answer } = await postTo(tasksUrl(), body, AUTH);
  assert.equal(status, 200, JSON.stringify(answer));
  return answer.id;
}

async function read(id: string, method = 'GET') {
  const res = await fetch(`${tasksUrl()}/${id}`, { method, headers: AUTH });
  return { status: res.status, body: (await res.json()) as any };
}

/** Each status the task shows, in order, polled until it ends (or the deadline passes). */
async function statusesUntilDone(id: string, timeoutMs = 5000): Promise<{ statuses: string[]; last: any }> {
  const deadline = Date.now() + timeoutMs;
  const statuses: string[] = [];
  for (;;) {
    const { body } = await read(id);
    if (statuses.at(-1) !== body.status) statuses.push(body.status);
    if (!['queued', 'running'].includes(body.status)) return { statuses, last: body };
    if (Date.now() > deadline) throw new Error(`task ${id} still ${body.status} after ${timeoutMs} ms`);
    await delay(5); // a poll interval, not a wait for the result
  }
}

async function untilStatus(id: string, wanted: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((await read(id)).body.status !== wanted) {
    if (Date.now() > deadline) throw new Error(`task ${id} never ${wanted}`);
    await delay(5);
  }
}

test('a task is queued, then running, then succeeded with the video, its usage and the request echoed', async () => {
  const id = await create({ ...VIDEO, seed: 42, service_tier: 'flex', generate_audio: false });
  assert.match(id, /^cgt-[0-9a-f]{16}\d{4}$/);
  const { statuses, last } = await statusesUntilDone(id);
  assert.deepEqual(statuses, ['queued', 'running', 'succeeded']);
  assert.ok(last.updated_at - last.created_at <= 1);
  assert.deepEqual(last, {
    id,
    model: 'sandbox-video',
    status: 'succeeded',
    error: null,
    content: { video_url: `${sandbox.url}/__media/video-${id}.mp4` },
    usage: { completion_tokens: 108_900, total_tokens: 108_900 },
    created_at: last.created_at,
    updated_at: last.updated_at,
    seed: 42,
    resolution: '720p',
    ratio: '16:9',
    duration: 5,
    framespersecond: 24,
    generate_audio: false,
    draft: false,
    service_tier: 'flex',
    execution_expires_after: 172_800,
  });
});

test('the video and the last frame are served by the sandbox as mp4 and png', async () => {
  const id = await create({ ...VIDEO, return_last_frame: true });
  const { last } = await statusesUntilDone(id);
  const video = await fetch(last.content.video_url);
  const frame = await fetch(last.content.last_frame_url);
  assert.deepEqual([video.status, video.headers.get('content-type')], [200, 'video/mp4']);
  assert.equal(
    Buffer.from(await video.arrayBuffer())
      .subarray(4, 8)
      .toString('latin1'),
    'ftyp',
  );
  assert.deepEqual([frame.status, frame.headers.get('content-type')], [200, 'image/png']);
  assert.equal(
    Buffer.from(await frame.arrayBuffer())
      .subarray(1, 4)
      .toString('latin1'),
    'PNG',
  );
});

test('usage follows the duration: 1280 × 720 × (24 × seconds + 1) / 1024 tokens; -1 lets the model choose 12 s', async () => {
  const ten = await statusesUntilDone(await create({ ...VIDEO, duration: 10 }));
  const chosen = await statusesUntilDone(await create({ ...VIDEO, duration: -1 }));
  assert.deepEqual([ten.last.duration, ten.last.usage.total_tokens], [10, 216_900]);
  assert.deepEqual([chosen.last.duration, chosen.last.usage.total_tokens], [12, 260_100]);
  assert.equal(videoTokens(5), 108_900);
});

test('a task_outcome fault fails as many created tasks as its times, and polls do not spend it', async () => {
  await addFault(sandbox.url, { kind: 'video', task_outcome: 'failed', times: 1 });
  const failed = await statusesUntilDone(await create());
  const next = await statusesUntilDone(await create());
  assert.deepEqual(failed.statuses, ['queued', 'running', 'failed']);
  const { created_at, updated_at, seed } = failed.last;
  assert.deepEqual(failed.last, {
    id: failed.last.id,
    model: 'sandbox-video',
    status: 'failed',
    error: {
      code: 'OutputVideoSensitiveContentDetected',
      message: 'The request failed because the output video may contain sensitive information (sandbox fault: task_outcome failed).',
    },
    created_at,
    updated_at,
    seed,
    resolution: '720p',
    ratio: '16:9',
    duration: 5,
    framespersecond: 24,
    generate_audio: true,
    draft: false,
    service_tier: 'default',
    execution_expires_after: 172_800,
  });
  assert.equal(next.last.status, 'succeeded');
});

test('DELETE cancels a queued task, which then cannot be deleted', async () => {
  const id = await create();
  assert.deepEqual(await read(id, 'DELETE'), { status: 200, body: {} });
  assert.equal((await read(id)).body.status, 'cancelled');
  const again = await read(id, 'DELETE');
  assert.deepEqual(again, {
    status: 400,
    body: { error: { code: 'InvalidParameter', message: `The task ${id} is cancelled and cannot be cancelled or deleted.`, param: 'id', type: 'BadRequest' } },
  });
});

test('DELETE of a running task is refused and the task goes on', async () => {
  const id = await create();
  await untilStatus(id, 'running');
  const refused = await read(id, 'DELETE');
  assert.deepEqual([refused.status, refused.body.error.code], [400, 'InvalidParameter']);
  assert.equal(refused.body.error.message, `The task ${id} is running and cannot be cancelled or deleted.`);
  assert.equal((await statusesUntilDone(id)).last.status, 'succeeded');
});

test('DELETE of a finished task deletes it: GET then answers 404', async () => {
  const id = await create();
  await statusesUntilDone(id);
  assert.deepEqual(await read(id, 'DELETE'), { status: 200, body: {} });
  assert.deepEqual(await read(id), {
    status: 404,
    body: { error: { code: 'ResourceNotFound', message: `The specified task ${id} is not found.`, param: 'id', type: 'NotFound' } },
  });
});

test('a create without model or content is refused with an ARK InvalidParameter error naming the field', async () => {
  const noModel = await postTo(tasksUrl(), { content: VIDEO.content }, AUTH);
  const noContent = await postTo(tasksUrl(), { model: 'sandbox-video' }, AUTH);
  assert.deepEqual(
    [noModel.status, noModel.body],
    [400, { error: { code: 'InvalidParameter', message: 'model: required, a non-empty string', param: 'model', type: 'BadRequest' } }],
  );
  assert.deepEqual([noContent.status, noContent.body.error.param], [400, 'content']);
});

test('requests without a bearer token are refused with 401 AuthenticationError', async () => {
  const created = await postTo(tasksUrl(), VIDEO, { 'content-type': 'application/json' });
  const queried = await fetch(`${tasksUrl()}/cgt-x`);
  assert.deepEqual([created.status, created.body.error.code, created.body.error.type], [401, 'AuthenticationError', 'Unauthorized']);
  assert.equal(queried.status, 401);
});

test('a status fault applies to queries too, in the ARK error shape', async () => {
  const id = await create();
  await addFault(sandbox.url, { kind: 'video', status: 500, times: 1 });
  const faulted = await read(id);
  assert.deepEqual(faulted, {
    status: 500,
    body: { error: { code: 'InternalServiceError', message: 'sandbox fault: status 500', param: '', type: 'InternalServerError' } },
  });
  assert.equal((await read(id)).status, 200);
});

test('create, query and delete are logged with the kind video', async () => {
  const id = await create();
  await read(id);
  await read(id, 'DELETE');
  const logged = (await loggedRequests(sandbox.url)).map((r) => [r.kind, r.method, r.path]);
  const path = '/api/v3/contents/generations/tasks';
  assert.deepEqual(logged, [
    ['video', 'POST', path],
    ['video', 'GET', `${path}/${id}`],
    ['video', 'DELETE', `${path}/${id}`],
  ]);
});
