import { mp4File } from './media.js';
import { hasBearer } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { durationFromUrl, outcomeOf, taskShelf } from './tasks.js';
import { hashOf, isRecord } from './text.js';

// Subtitle erase, in the AI MediaKit task style (volcengine-formats.md §6.1): our choice of shape, since
// Volcengine's VOD erase needs media already in a VOD space. Its paths live here and nowhere else.

export const ERASE_PATHS = {
  submit: '/api/v1/tools/erase-subtitle',
  task: '/api/v1/tasks/:task_id',
} as const;

/** Video length when the video URL carries no `duration_s=<N>`. */
export const DEFAULT_VIDEO_SECONDS = 5;

interface EraseTask {
  readonly sourceUrl: string;
  readonly videoUrl: string;
  readonly duration: number;
}

const ERASE_TASKS = taskShelf<EraseTask>('erase');

/** MediaKit's answers all carry `success` and a request id; a refusal adds `error`. */
function mediaKitError(code: string, message: string, requestId: string) {
  return { success: false, error: { code, message }, request_id: requestId };
}

const CODES: Record<number, string> = { 400: 'InvalidParameter', 401: 'Unauthorized', 404: 'TaskNotFound', 429: 'TooManyRequests' };
const codeForStatus = (status: number) => CODES[status] ?? (status >= 500 ? 'InternalError' : 'InvalidParameter');

export const eraseSubmitRoute: SandboxRoute = {
  kind: 'erase',
  method: 'POST',
  path: ERASE_PATHS.submit,
  errorBody: (status, message) => mediaKitError(codeForStatus(status), message, 'req-sandbox-fault'),
  createsTask: true,
  handle: submitErase,
};

export const eraseTaskRoute: SandboxRoute = {
  kind: 'erase',
  method: 'GET',
  path: ERASE_PATHS.task,
  errorBody: eraseSubmitRoute.errorBody,
  handle: answerEraseTask,
};

/** Deterministic: a hash of the request, so a recorded answer is a fixture. */
const requestIdOf = (ctx: SandboxContext) => `req-${hashOf([ctx.method, ctx.path, ctx.body]).slice(0, 20)}`;

const UNAUTHORIZED_MESSAGE = 'Missing bearer token: send Authorization: Bearer <key>';

function submitErase(ctx: SandboxContext): void {
  const requestId = requestIdOf(ctx);
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, mediaKitError('Unauthorized', UNAUTHORIZED_MESSAGE, requestId));
  const body = isRecord(ctx.body) ? ctx.body : {};
  const invalid = (message: string) => ctx.reply.json(400, mediaKitError('InvalidParameter', message, requestId));
  const { video_url: sourceUrl, client_token: token } = body;
  if (typeof sourceUrl !== 'string' || !/^https?:\/\//.test(sourceUrl)) return invalid('video_url: required, an http(s) URL');
  if (token !== undefined && typeof token !== 'string') return invalid('client_token: expected a string');
  const duration = durationFromUrl(sourceUrl, DEFAULT_VIDEO_SECONDS);
  if (typeof duration === 'string') return invalid(`video_url: ${duration}`);
  // the same client_token names the same task: a retried submit does not start a second one
  const id = token ? `amk-${hashOf(['client_token', token]).slice(0, 20)}` : `amk-${ctx.tasks.nextId(ctx.body)}`;
  if (!ctx.tasks.get(ERASE_TASKS, id)) {
    const videoUrl = ctx.media.put(ctx.baseUrl, `erase-${id}.mp4`, mp4File(`erase-${id}.mp4`));
    ctx.tasks.create(ERASE_TASKS, { id, outcome: outcomeOf(ctx.fault), data: { sourceUrl, videoUrl, duration } });
  }
  ctx.reply.json(200, { success: true, task_id: id, status: 'running', request_id: requestId });
}

function answerEraseTask(ctx: SandboxContext): void {
  const requestId = requestIdOf(ctx);
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, mediaKitError('Unauthorized', UNAUTHORIZED_MESSAGE, requestId));
  const id = ctx.params.task_id as string;
  const task = ctx.tasks.get(ERASE_TASKS, id);
  if (!task) return ctx.reply.json(404, mediaKitError('TaskNotFound', `task ${id} not found`, requestId));
  const phase = ctx.tasks.phase(task);
  const base = { success: true, task_id: id };
  if (phase === 'succeeded') {
    const result = { video_url: task.data.videoUrl, duration: task.data.duration };
    return ctx.reply.json(200, { ...base, status: 'completed', result, request_id: requestId });
  }
  if (phase === 'failed') {
    const error = { code: 'ProcessFailed', message: 'subtitle erase failed (sandbox fault: task_outcome failed)' };
    return ctx.reply.json(200, { ...base, status: 'failed', error, request_id: requestId });
  }
  // MediaKit has no queued state: a task is running from its submit
  ctx.reply.json(200, { ...base, status: 'running', request_id: requestId });
}
