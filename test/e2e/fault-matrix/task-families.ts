// The task kinds: a fault on the create (the upstream's submit), on the engine's polls, or on the
// paid work the engine does itself (an image generation, the minutes summary). The task must end
// failed and refunded; a caller that leaves during the create does not stop it.
import assert from 'node:assert/strict';
import { request } from 'undici';
import { ARK_TASKS_PATH } from '../../../src/upstreams/ark/client.js';
import { ERASE_PATHS } from '../../../src/upstreams/erase/client.js';
import { MINUTES_PATHS } from '../../../src/upstreams/volc-minutes/client.js';
import type { TestGateway } from '../../helpers/gateway.js';
import { addFault, callAndWait, leaveWhileUpstreamWorks, postJson, upstreamRequests, waitFor } from './calls.js';
import { BEHAVIOUR, type CellContext, type Family, type Fault, type MoneyRule, RECORDED_FREE, RELEASED, TIMING } from './matrix.js';

type TaskKind = 'image' | 'video' | 'erase' | 'minutes';
/** Where the fault is: the create's submit upstream, the polls, or paid work the engine does (retried within attempts). */
type Phase = 'submit' | 'poll' | 'generation' | 'summary';

interface TaskSpec {
  name: string;
  taskKind: TaskKind;
  /** The sandbox kind of the create and the polls. */
  kind: string;
  phase: Phase;
  create: { path: string; body(prepared: Record<string, string>): unknown };
  /** The task's GET on the gateway. */
  read: (id: string) => string;
  /** The upstream paths of the submit and of a poll (images have neither: the engine generates). */
  submitPath?: string;
  pollPath?: string;
  /** The upstream's 404 on a poll means the task is gone: failed at once. Otherwise it is retried to the task timeout. */
  missingTaskFailsAtOnce?: boolean;
  prepare?(ctx: CellContext): Promise<Record<string, string>>;
}

const MAX_GENERATION_ATTEMPTS = 3; // tasks.max_generation_attempts, the default
const UPSTREAM_FAILED = { status: 502, body: { error: 'upstream provider error', type: 'server_error' } };
const ONE_PIECE = 'answered in one piece: there is no stream to break';

interface TaskRow {
  id: string;
  status: string;
  error: string | null;
}

async function taskOf(gw: TestGateway, accountId: string, kind: TaskKind): Promise<TaskRow | undefined> {
  return gw.gateway.store.db
    .selectFrom('tasks')
    .select(['id', 'status', 'error'])
    .where('account_id', '=', accountId)
    .where('kind', '=', kind)
    .executeTakeFirst();
}

async function endedTask(gw: TestGateway, accountId: string, kind: TaskKind): Promise<TaskRow> {
  return waitFor(
    async () => {
      const task = await taskOf(gw, accountId, kind);
      return task && ['succeeded', 'failed', 'cancelled'].includes(task.status) && task;
    },
    { timeoutMs: 15_000 },
  );
}

/** The sandbox rules of the cell: the fault where the phase says, and a slow create when the caller leaves during it. */
async function programFault(gw: TestGateway, spec: TaskSpec, fault: Fault, leaves: boolean): Promise<void> {
  const behaviour = BEHAVIOUR[fault];
  const slowCreate = leaves && fault !== 'hang' ? { delay_ms: TIMING.leaveDelayMs } : {};
  if (spec.phase === 'submit') return addFault(gw, { kind: spec.kind, path: spec.submitPath, times: 1, ...behaviour, ...slowCreate });
  if (spec.phase === 'poll' && fault === 'error') {
    // the upstream's own failure: its task ends failed, as the poll then reports it
    return addFault(gw, { kind: spec.kind, path: spec.submitPath, times: 1, task_outcome: 'failed', ...(leaves && { delay_ms: TIMING.leaveDelayMs }) });
  }
  if (spec.phase === 'poll') await addFault(gw, { kind: spec.kind, path: spec.pollPath, ...behaviour, ...(fault === '4xx' && { status: 404 }) });
  if (spec.phase === 'generation') await addFault(gw, { kind: 'images', ...behaviour });
  if (spec.phase === 'summary') await addFault(gw, { kind: 'chat', ...behaviour });
  // after the poll rule: a create path can be a prefix of the poll path, and the oldest matching rule wins
  if (leaves && spec.submitPath) await addFault(gw, { kind: spec.kind, path: spec.submitPath, times: 1, delay_ms: TIMING.leaveDelayMs });
}

/** The error the failed task must carry, and how many times the paid work may have been asked for. */
function checkFailure(spec: TaskSpec, fault: Fault, error: { code: string; message: string }, attempts: number): void {
  const seen = `${spec.name}: failed with ${JSON.stringify(error)} after ${attempts} upstream attempts`;
  if (spec.phase === 'submit') return assert.equal(error.code, 'upstream_refused', seen);
  if (spec.phase === 'poll') {
    if (fault === 'error') return assert.notEqual(error.code, 'upstream_timeout', `${seen}: the upstream's own failure, not a timeout`);
    const atOnce = fault === '4xx' && spec.missingTaskFailsAtOnce;
    return assert.equal(error.code, atOnce ? 'upstream_task_missing' : 'upstream_timeout', seen);
  }
  // paid work: an image refusal ends it at once; anything else is tried again, never past the attempts
  // allowed. The task timeout may come first (each hung attempt waits out the headers timeout).
  if (spec.phase === 'generation' && fault === '4xx') return assert.deepEqual([error.code, attempts], ['upstream_error', 1], seen);
  assert.ok(attempts >= 1 && attempts <= MAX_GENERATION_ATTEMPTS, seen);
  if (error.code !== 'upstream_timeout') assert.deepEqual([error.code, attempts], ['generation_attempts_exhausted', MAX_GENERATION_ATTEMPTS], seen);
}

async function runTask(spec: TaskSpec, ctx: CellContext, prepared: Record<string, string>): Promise<MoneyRule> {
  const { gw, key, accountId, fault, caller } = ctx;
  const send = postJson(gw, spec.create.path, spec.create.body(prepared))(key);
  await programFault(gw, spec, fault, caller === 'leaves');

  if (caller === 'waits') {
    const answer = await callAndWait(send);
    const seen = `${spec.name}: the create answered ${answer.status} ${answer.text.slice(0, 300)}`;
    const body = answer.text ? JSON.parse(answer.text) : undefined;
    if (spec.phase !== 'submit') assert.equal(answer.status, 200, seen);
    else if (fault === '4xx')
      assert.deepEqual([answer.status, body.type, /^upstream refused the request/.test(body.error)], [400, 'invalid_request_error', true], seen);
    else assert.deepEqual({ status: answer.status, body }, UPSTREAM_FAILED, seen);
  } else if (spec.submitPath) {
    await leaveWhileUpstreamWorks(gw, send, { kind: spec.kind, path: spec.submitPath });
  } else {
    // images ask no upstream during the create: the caller leaves once its task exists, answered or not
    const controller = new AbortController();
    const sent = send(controller.signal).then(
      (res) => res.body.dump(),
      () => undefined,
    );
    await waitFor(() => taskOf(gw, accountId, spec.taskKind), { timeoutMs: 5_000, intervalMs: 10 });
    controller.abort();
    await sent;
  }

  // tracked to its end whether or not the caller stayed
  const task = await endedTask(gw, accountId, spec.taskKind);
  assert.equal(task.status, 'failed', `${spec.name}: the task ended ${task.status}`);
  const paidWork = spec.phase === 'generation' ? 'images' : spec.phase === 'summary' ? 'chat' : undefined;
  const attempts = paidWork ? (await upstreamRequests(gw, paidWork)).length : 0;
  checkFailure(spec, fault, JSON.parse(task.error ?? '{}'), attempts);
  const read = await request(`${gw.url}${spec.read(task.id)}`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(((await read.body.json()) as { status: string }).status, 'failed', `${spec.name}: GET ${spec.read(task.id)}`);
  // a failed task produced nothing the account asked for; an erase is still on record (spec 4.5)
  return spec.taskKind === 'erase' ? RECORDED_FREE : RELEASED;
}

const NOT_APPLICABLE: Record<Phase, Partial<Record<Fault, string>>> = {
  submit: { drop: ONE_PIECE, error: "an upstream task that fails is the poll's error code" },
  poll: { drop: ONE_PIECE },
  generation: { drop: ONE_PIECE, error: 'the images answer is one JSON body; its refusal is the 4xx cell' },
  summary: { drop: ONE_PIECE, error: 'the summary is one JSON answer' },
};

const taskFamily = (spec: TaskSpec): Family => ({
  name: spec.name,
  notApplicable: (fault) => NOT_APPLICABLE[spec.phase][fault],
  ...(spec.prepare && { prepare: spec.prepare }),
  run: (ctx, prepared) => runTask(spec, ctx, prepared),
  slow: (fault) => fault === 'hang' || spec.phase !== 'submit',
});

const VIDEO_BODY = { model: 'sandbox-video', content: [{ type: 'text', text: 'fault matrix' }], duration: 5 };
const video = (name: string, path: string, phase: Phase): TaskSpec => ({
  name,
  taskKind: 'video',
  kind: 'video',
  phase,
  create: { path, body: () => VIDEO_BODY },
  read: (id) => `/v1/videos/generations/${id}`,
  submitPath: ARK_TASKS_PATH,
  pollPath: `${ARK_TASKS_PATH}/`,
  missingTaskFailsAtOnce: true,
});

/** Erase needs a video of the account, generated here and succeeded: made before any fault is in place. */
async function sourceVideo({ gw, key, accountId }: CellContext): Promise<Record<string, string>> {
  const created = await gw.call(key, 'POST', '/v1/videos/generations', { ...VIDEO_BODY, duration: 4 });
  if (created.status !== 200) throw new Error(`the source video answered ${created.status}`);
  const task = await endedTask(gw, accountId, 'video');
  if (task.status !== 'succeeded') throw new Error(`the source video ended ${task.status}`);
  return { videoTaskId: task.id };
}
const erase = (phase: Phase): TaskSpec => ({
  name: `subtitle erase, ${phase}`,
  taskKind: 'erase',
  kind: 'erase',
  phase,
  prepare: sourceVideo,
  create: { path: '/v1/videos/erase-subtitle', body: (prepared) => ({ video_task_id: prepared.videoTaskId }) },
  read: (id) => `/v1/videos/erase-subtitle/${id}`,
  submitPath: ERASE_PATHS.submit,
  pollPath: ERASE_PATHS.task(''),
  missingTaskFailsAtOnce: true,
});

const AUDIO_URL = 'https://media.example.com/meeting.mp3?duration_s=30';
const minutes = (model: 'vendor-minutes' | 'service-minutes', phase: Phase): TaskSpec => ({
  name: `${model}, ${phase}`,
  taskKind: 'minutes',
  kind: 'minutes',
  phase,
  create: { path: '/v1/audio/minutes', body: () => ({ model, file_url: AUDIO_URL, ...(model === 'vendor-minutes' && { all_activate: true }) }) },
  read: (id) => `/v1/audio/minutes/${id}`,
  submitPath: model === 'vendor-minutes' ? MINUTES_PATHS.larkSubmit : MINUTES_PATHS.asrSubmit,
  pollPath: model === 'vendor-minutes' ? MINUTES_PATHS.larkQuery : MINUTES_PATHS.asrQuery,
});

export const TASK_FAMILIES: Family[] = [
  taskFamily({
    name: 'images, generation',
    taskKind: 'image',
    kind: 'images',
    phase: 'generation',
    create: { path: '/v1/images/async', body: () => ({ model: 'sandbox-image', prompt: 'fault matrix' }) },
    read: (id) => `/v1/images/async/${id}`,
  }),
  taskFamily(video('video, create', '/v1/videos/generations', 'submit')),
  taskFamily(video('video, create on the ARK path', ARK_TASKS_PATH, 'submit')),
  taskFamily(video('video, poll', '/v1/videos/generations', 'poll')),
  taskFamily(erase('submit')),
  taskFamily(erase('poll')),
  taskFamily(minutes('vendor-minutes', 'submit')),
  taskFamily(minutes('vendor-minutes', 'poll')),
  taskFamily(minutes('service-minutes', 'submit')),
  taskFamily(minutes('service-minutes', 'poll')),
  taskFamily(minutes('service-minutes', 'summary')),
];
