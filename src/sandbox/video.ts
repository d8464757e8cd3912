import { mp4File, pngFile } from './media.js';
import { hasBearer } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { outcomeOf, type SandboxTask, type TaskPhase, taskShelf } from './tasks.js';
import { hashOf, isRecord } from './text.js';

// ARK video generation tasks (volcengine-formats.md §2): create, query, cancel/delete.

const TASKS_PATH = '/api/v3/contents/generations/tasks';

/** What a task keeps of its request, echoed by every query. */
interface VideoTask {
  readonly model: string;
  readonly seed: number;
  readonly resolution: string;
  readonly ratio: string;
  readonly duration: number;
  readonly generateAudio: boolean;
  readonly draft: boolean;
  readonly serviceTier: string;
  readonly executionExpiresAfter: number;
  readonly videoUrl: string;
  readonly lastFrameUrl: string | undefined;
}

const VIDEO_TASKS = taskShelf<VideoTask>('video');

export const FRAMES_PER_SECOND = 24;
/** What `duration: -1` ("the model chooses") comes out as. */
export const MODEL_CHOSEN_DURATION = 12;
// The resolutions the gateway's contract lists (spec 4.4); real models each take a subset.
const RESOLUTIONS = ['480p', '720p', '1080p', '768P', '2K'];
const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'];
const CONTENT_TYPES = ['text', 'image_url', 'video_url', 'audio_url', 'draft_task'];

/**
 * Completion tokens of a finished video: 1280×720 pixels × (fps × seconds + 1) frames / 1024, whatever the
 * resolution asked (§2.7: a real 720p 5 s task reported 108,900 = 1280 × 720 × 121 / 1024).
 */
export function videoTokens(durationSeconds: number): number {
  return Math.floor((1280 * 720 * (FRAMES_PER_SECOND * durationSeconds + 1)) / 1024);
}

export interface ArkErrorBody {
  error: { code: string; message: string; param: string; type: string };
}

export function arkError(code: string, message: string, type = 'BadRequest', param = ''): ArkErrorBody {
  return { error: { code, message, param, type } };
}

const ARK_ERRORS: Record<number, [code: string, type: string]> = {
  400: ['InvalidParameter', 'BadRequest'],
  401: ['AuthenticationError', 'Unauthorized'],
  403: ['AccessDenied', 'Forbidden'],
  404: ['InvalidEndpointOrModel.NotFound', 'NotFound'],
  429: ['RateLimitExceeded', 'TooManyRequests'],
};

/** The code and type ARK commonly sends with a status (§2.8). */
export function arkErrorForStatus(status: number, message: string): ArkErrorBody {
  const [code, type] = ARK_ERRORS[status] ?? (status >= 500 ? ['InternalServiceError', 'InternalServerError'] : ['InvalidParameter', 'BadRequest']);
  return arkError(code, message, type);
}

const UNAUTHORIZED = arkError('AuthenticationError', 'The API key in the request is missing or invalid: send Authorization: Bearer <key>', 'Unauthorized');

const notFound = (id: string) => arkError('ResourceNotFound', `The specified task ${id} is not found.`, 'NotFound', 'id');

export const videoCreateRoute: SandboxRoute = {
  kind: 'video',
  method: 'POST',
  path: TASKS_PATH,
  errorBody: arkErrorForStatus,
  createsTask: true,
  handle: createVideoTask,
};

export const videoGetRoute: SandboxRoute = {
  kind: 'video',
  method: 'GET',
  path: `${TASKS_PATH}/:id`,
  errorBody: arkErrorForStatus,
  handle: answerVideoTask,
};

export const videoDeleteRoute: SandboxRoute = {
  kind: 'video',
  method: 'DELETE',
  path: `${TASKS_PATH}/:id`,
  errorBody: arkErrorForStatus,
  handle: deleteVideoTask,
};

function createVideoTask(ctx: SandboxContext): void {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const request = parseVideoRequest(ctx.body);
  if ('error' in request) return ctx.reply.json(400, request);
  const id = `cgt-${ctx.tasks.nextId(ctx.body)}`;
  const hash = hashOf(ctx.body);
  const videoUrl = ctx.media.put(ctx.baseUrl, `video-${id}.mp4`, mp4File(`video-${id}.mp4`));
  const lastFrameUrl = request.returnLastFrame ? ctx.media.put(ctx.baseUrl, `video-${id}-last-frame.png`, pngFile()) : undefined;
  const data: VideoTask = {
    ...request.task,
    // -1 asks for a random seed; a hash of the request stands in for the dice
    seed: request.task.seed === -1 ? Number.parseInt(hash.slice(0, 8), 16) % 100_000 : request.task.seed,
    videoUrl,
    lastFrameUrl,
  };
  ctx.tasks.create(VIDEO_TASKS, { id, outcome: outcomeOf(ctx.fault), data });
  ctx.reply.json(200, { id });
}

function answerVideoTask(ctx: SandboxContext): void {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const id = ctx.params.id as string;
  const task = ctx.tasks.get(VIDEO_TASKS, id);
  if (!task) return ctx.reply.json(404, notFound(id));
  ctx.reply.json(200, videoRecord(task, ctx.tasks.phase(task), ctx.tasks.updatedAtMs(task)));
}

/** §2.5: a queued task is cancelled, a finished one deleted; a running or cancelled one cannot be touched. */
function deleteVideoTask(ctx: SandboxContext): void {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const id = ctx.params.id as string;
  const task = ctx.tasks.get(VIDEO_TASKS, id);
  if (!task) return ctx.reply.json(404, notFound(id));
  const phase = ctx.tasks.phase(task);
  if (phase === 'running' || phase === 'cancelled') {
    const message = `The task ${id} is ${phase} and cannot be cancelled or deleted.`;
    return ctx.reply.json(400, arkError('InvalidParameter', message, 'BadRequest', 'id'));
  }
  if (phase === 'queued') ctx.tasks.cancel(task);
  else ctx.tasks.delete(VIDEO_TASKS, id);
  ctx.reply.json(200, {});
}

function videoRecord(task: SandboxTask<VideoTask>, status: TaskPhase, updatedAtMs: number) {
  const { data } = task;
  const tokens = videoTokens(data.duration);
  const succeeded = status === 'succeeded';
  return {
    id: task.id,
    model: data.model,
    status,
    error:
      status === 'failed'
        ? {
            code: 'OutputVideoSensitiveContentDetected',
            message: 'The request failed because the output video may contain sensitive information (sandbox fault: task_outcome failed).',
          }
        : null,
    ...(succeeded && {
      content: { video_url: data.videoUrl, ...(data.lastFrameUrl && { last_frame_url: data.lastFrameUrl }) },
      usage: { completion_tokens: tokens, total_tokens: tokens },
    }),
    created_at: Math.floor(task.createdAtMs / 1000),
    updated_at: Math.floor(updatedAtMs / 1000),
    seed: data.seed,
    resolution: data.resolution,
    ratio: data.ratio,
    duration: data.duration,
    framespersecond: FRAMES_PER_SECOND,
    generate_audio: data.generateAudio,
    draft: data.draft,
    service_tier: data.serviceTier,
    execution_expires_after: data.executionExpiresAfter,
  };
}

type ParsedVideo = { task: Omit<VideoTask, 'videoUrl' | 'lastFrameUrl'>; returnLastFrame: boolean } | ArkErrorBody;

const invalid = (param: string, message: string) => arkError('InvalidParameter', `${param}: ${message}`, 'BadRequest', param);

function parseVideoRequest(body: unknown): ParsedVideo {
  if (!isRecord(body)) return invalid('body', 'expected a JSON object');
  const { model, content } = body;
  if (typeof model !== 'string' || model === '') return invalid('model', 'required, a non-empty string');
  if (!Array.isArray(content) || content.length === 0) return invalid('content', 'required, a non-empty array');
  const badItem = content.findIndex((item) => !isRecord(item) || !CONTENT_TYPES.includes(item.type as string));
  if (badItem >= 0) return invalid(`content[${badItem}].type`, `expected one of ${CONTENT_TYPES.join(', ')}`);

  const resolution = body.resolution ?? '720p';
  if (!RESOLUTIONS.includes(resolution as string)) return invalid('resolution', `expected one of ${RESOLUTIONS.join(', ')}`);
  const ratio = body.ratio ?? 'adaptive';
  if (!RATIOS.includes(ratio as string)) return invalid('ratio', `expected one of ${RATIOS.join(', ')}`);
  const duration = body.duration ?? 5;
  if (!Number.isInteger(duration) || (duration !== -1 && ((duration as number) < 1 || (duration as number) > 15))) {
    return invalid('duration', 'expected an integer from 1 to 15, or -1');
  }
  const seed = body.seed ?? -1;
  if (!Number.isInteger(seed) || (seed as number) < -1 || (seed as number) > 2 ** 32 - 1) {
    return invalid('seed', 'expected an integer from -1 to 4294967295');
  }
  const expires = body.execution_expires_after ?? 172_800;
  if (!Number.isInteger(expires) || (expires as number) < 3600 || (expires as number) > 259_200) {
    return invalid('execution_expires_after', 'expected an integer from 3600 to 259200');
  }
  const serviceTier = body.service_tier ?? 'default';
  if (serviceTier !== 'default' && serviceTier !== 'flex') return invalid('service_tier', 'expected default or flex');
  for (const flag of ['generate_audio', 'return_last_frame', 'draft'] as const) {
    if (body[flag] !== undefined && typeof body[flag] !== 'boolean') return invalid(flag, 'expected a boolean');
  }
  return {
    task: {
      model,
      seed: seed as number,
      resolution: resolution as string,
      // adaptive follows the input image; with none to follow the sandbox reports the common landscape ratio
      ratio: ratio === 'adaptive' ? '16:9' : (ratio as string),
      duration: duration === -1 ? MODEL_CHOSEN_DURATION : (duration as number),
      generateAudio: body.generate_audio !== false,
      draft: body.draft === true,
      serviceTier,
      executionExpiresAfter: expires as number,
    },
    returnLastFrame: body.return_last_frame === true,
  };
}
