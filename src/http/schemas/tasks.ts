// Tasks: images, videos (the gateway's path and the ARK-compatible one), subtitle erase and
// meeting minutes. Image and erase bodies are validated here; video and minutes bodies are checked
// by their normalisers (src/tasks/*-request.ts, with their own messages and defaults), so their
// schemas below only document them (docsOnly), built from the normalisers' own constants.
import { MINUTES_FILE_TYPES, MINUTES_LANGS, MINUTES_MODELS } from '../../tasks/minutes-request.js';
import {
  MAX_SEED,
  MAX_VIDEO_SECONDS,
  VIDEO_CONTENT_TYPES,
  VIDEO_RATIOS,
  VIDEO_RESOLUTIONS,
  VIDEO_ROLES,
  VIDEO_SERVICE_TIERS,
} from '../../tasks/video-request.js';
import { errorResponses, LOOKUP_ERRORS, METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

const CallbackUrl = {
  type: 'string',
  minLength: 1,
  description: 'Called with a signed POST when the task ends (X-Service-Signature); http(s), no credentials, no private address.',
} as const;

export const ImagesAsyncBody = {
  type: 'object',
  description: 'An images-generation request.',
  required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1, description: 'An image model of GET /v1/models.' },
    prompt: { type: 'string', minLength: 1, maxLength: 32_000 },
    n: { type: 'integer', minimum: 1, maximum: 10, description: 'Images to make, 1 by default; each is held for.' },
    size: { type: 'string', minLength: 1 },
    response_format: { type: 'string', enum: ['url', 'b64_json'] },
    callback_url: CallbackUrl,
  },
} as const;

export const EraseBody = {
  type: 'object',
  required: ['video_task_id'],
  additionalProperties: false,
  properties: {
    video_task_id: { type: 'string', minLength: 1, description: 'A succeeded video task of this account, finished less than 23 hours ago.' },
    callback_url: CallbackUrl,
    model: { type: 'string', minLength: 1, description: 'An erase model; the configured one by default.' },
  },
} as const;

const mediaItem = (description: string) => ({ type: 'object', required: ['url'], properties: { url: { type: 'string' } }, description }) as const;

const VideoBody = {
  type: 'object',
  description: 'Unknown fields are refused (400), not dropped; null counts as absent.',
  required: ['model', 'content'],
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1, description: 'A video model of GET /v1/models?type=video.' },
    content: {
      type: 'array',
      minItems: 1,
      description: 'The prompt, and images, videos or audio to start from or refer to.',
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string', enum: [...VIDEO_CONTENT_TYPES] },
          text: { type: 'string', description: 'type text: the prompt.' },
          image_url: mediaItem('type image_url.'),
          video_url: mediaItem('type video_url.'),
          audio_url: mediaItem('type audio_url.'),
          role: { type: 'string', enum: [...VIDEO_ROLES], description: 'What a media item is for.' },
        },
      },
    },
    resolution: { type: 'string', enum: [...VIDEO_RESOLUTIONS], default: '720p' },
    ratio: { type: 'string', enum: [...VIDEO_RATIOS], default: 'adaptive' },
    duration: {
      type: 'integer',
      minimum: -1,
      maximum: MAX_VIDEO_SECONDS,
      default: 5,
      description: 'Seconds (billed per second); -1 lets the model choose, and holds for its longest.',
    },
    seed: { type: 'integer', minimum: -1, maximum: MAX_SEED, default: -1 },
    generate_audio: { type: 'boolean', default: true },
    return_last_frame: { type: 'boolean', default: false },
    camera_fixed: { type: 'boolean', default: false },
    watermark: { type: 'boolean', default: false },
    service_tier: { type: 'string', enum: [...VIDEO_SERVICE_TIERS], default: 'default' },
    callback_url: CallbackUrl,
    safety_identifier: { type: 'string', minLength: 1, maxLength: 64, description: 'An end user’s identifier for audit (a hash is advised).' },
  },
} as const;

const MinutesBody = {
  type: 'object',
  description: 'Unknown fields are refused (400); null counts as absent.',
  required: ['model', 'file_url'],
  additionalProperties: false,
  properties: {
    model: { type: 'string', enum: [...MINUTES_MODELS] },
    file_url: { type: 'string', description: 'http(s) audio or video the upstream can fetch; a POST /v1/files URL works.' },
    file_type: { type: 'string', enum: [...MINUTES_FILE_TYPES], description: 'Inferred from the URL’s suffix when absent.' },
    source_lang: { type: 'string', enum: [...MINUTES_LANGS], default: 'zh_cn' },
    all_activate: { type: 'boolean', default: false, description: 'vendor-minutes: every extra ability on.' },
    speaker_identification: { type: 'boolean', default: true, description: 'Always on with service-minutes.' },
    number_of_speakers: { type: 'integer', minimum: 0, default: 0, description: '0: detected. Sent to either model’s upstream.' },
    hot_words: { type: 'string', description: 'Words to favour: comma-separated, or a JSON list.' },
    need_word_time_series: { type: 'boolean', default: false },
    features: {
      type: 'object',
      description: 'vendor-minutes: at least one, unless all_activate.',
      properties: {
        summary: { type: 'boolean' },
        chapters: { type: 'boolean' },
        todos: { type: 'boolean' },
        qa: { type: 'boolean', description: 'Also accepted as question_answer.' },
        translate: { type: 'boolean' },
        target_lang: { type: 'string', enum: [...MINUTES_LANGS] },
      },
    },
    callback_url: CallbackUrl,
  },
} as const;

/** `:taskId`: the task's id, or (for the video reads) the upstream's. No constraint: a wrong one is a 404. */
const TaskIdParams = {
  type: 'object',
  required: ['taskId'],
  properties: { taskId: { type: 'string', description: 'The task id (for videos, the upstream id works too).' } },
} as const;

const instant = { type: 'string', format: 'date-time' } as const;
const TaskError = {
  type: 'object',
  properties: { code: { type: 'string', description: 'task_failed, …' }, message: { type: 'string' } },
} as const;

/** The first fields of the task's record (a submission the upstream refused is already failed, refunded). */
const TaskCreated = {
  description: 'The task.',
  type: 'object',
  required: ['id', 'status', 'created_at'],
  properties: {
    id: { type: 'string', description: 'The task id, for its GET.' },
    upstream_id: { type: 'string', description: 'The upstream’s id, once it has one.' },
    model: { type: 'string' },
    status: { type: 'string' },
    created_at: instant,
  },
} as const;

const TaskRecord = (statuses: string[], result: object) => ({
  description: 'The task.',
  type: 'object',
  required: ['id', 'model', 'status', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    upstream_id: { type: 'string' },
    request_id: { type: 'string', description: 'x-request-id of the request that created it.' },
    model: { type: 'string' },
    status: { type: 'string', enum: statuses },
    created_at: instant,
    updated_at: instant,
    finished_at: instant,
    result,
    error: { ...TaskError, description: 'Once failed (the hold is refunded).' },
  },
});

const LIVE_AS_PROCESSING = ['processing', 'succeeded', 'failed'];
const VIDEO_STATUSES = ['queued', 'processing', 'succeeded', 'failed', 'cancelled'];

const VideoResult = {
  type: 'object',
  description: 'Once succeeded: the video.',
  properties: {
    video_url: { type: 'string' },
    last_frame_url: { type: 'string', description: 'With return_last_frame.' },
    duration_seconds: { type: 'number', description: 'What was billed.' },
  },
} as const;

const creating = { headers: headers(IdempotencyKeyHeader) };
const tags = ['tasks'];

export const ImagesAsyncSchema = {
  tags,
  summary: 'Creates an image generation task; answers at once.',
  body: ImagesAsyncBody,
  docsOnly: creating,
  response: {
    200: {
      description: 'The task, queued.',
      type: 'object',
      properties: {
        id: { type: 'string' },
        status: { type: 'string', enum: ['queued'] },
        model: { type: 'string' },
        created_at: { type: 'integer', description: 'Unix seconds.' },
      },
    },
    ...METERED_ERRORS,
  },
};

export const ImageTaskSchema = {
  tags,
  summary: 'An image task: queued, processing, succeeded (with the images) or failed (refunded).',
  params: TaskIdParams,
  response: {
    200: {
      description: 'The task.',
      type: 'object',
      required: ['id', 'status'],
      properties: {
        id: { type: 'string' },
        status: { type: 'string', enum: ['queued', 'processing', 'succeeded', 'failed'] },
        model: { type: 'string' },
        created_at: { type: 'integer', description: 'Unix seconds.' },
        error: { type: 'string', description: 'Once failed.' },
        result: {
          type: 'object',
          description: 'Once succeeded: the upstream’s images answer, as it sent it (`data` of `{url}`; `usage` for models billed on tokens).',
          properties: { created: { type: 'integer' }, data: { type: 'array', items: { type: 'object', properties: { url: { type: 'string' } } } } },
        },
      },
    },
    ...LOOKUP_ERRORS,
  },
};

export const VideoCreateSchema = {
  tags,
  summary: 'Creates a video generation task; the answer wraps the upstream’s id as upstream_id.',
  description: 'Billed per second of video: the requested duration is held, settled when the video is made.',
  docsOnly: { body: VideoBody, ...creating },
  response: { 200: TaskCreated, ...METERED_ERRORS },
};

export const VideoTaskSchema = {
  tags,
  summary: 'A video task, by its id or the upstream’s.',
  params: TaskIdParams,
  response: { 200: TaskRecord(VIDEO_STATUSES, VideoResult), ...LOOKUP_ERRORS },
};

export const ArkCreateSchema = {
  tags,
  summary: 'Creates a video task in the upstream’s (ARK) own shape: `id` is the upstream id.',
  description: 'The same body, billing and routing as POST /v1/videos/generations. Also served under /api/v3, /v3 and /api/v1.',
  docsOnly: { body: VideoBody, ...creating },
  response: {
    200: {
      description: 'The task, queued.',
      type: 'object',
      properties: {
        id: { type: 'string', description: 'The upstream’s task id.' },
        model: { type: 'string' },
        status: { type: 'string', enum: ['queued'] },
        created_at: instant,
      },
    },
    ...METERED_ERRORS,
  },
};

export const ArkTaskSchema = {
  tags,
  summary: 'A video task as the upstream records it (ARK shape), by either id.',
  params: TaskIdParams,
  response: {
    200: {
      description: 'The upstream’s last record of the task, with the gateway’s status (queued, running, succeeded, failed, cancelled) and the public model id.',
      type: 'object',
      properties: {
        id: { type: 'string', description: 'The upstream id.' },
        model: { type: 'string' },
        status: { type: 'string' },
        created_at: { ...instant, description: 'When the task was created, as the creation answer gives it.' },
        updated_at: instant,
      },
    },
    ...LOOKUP_ERRORS,
  },
};

export const ArkCancelSchema = {
  tags,
  summary: 'Cancels a video task still queued; its hold is returned in full.',
  params: TaskIdParams,
  response: {
    200: { description: 'Cancelled.', type: 'object' },
    ...errorResponses(400),
    ...LOOKUP_ERRORS,
    ...errorResponses(502),
  },
};

export const EraseCreateSchema = {
  tags,
  summary: 'Creates a subtitle erase task on a video this account generated less than 23 hours ago.',
  description: 'Billed per second of the source video. The clean video joins the asset library beside the original.',
  body: EraseBody,
  docsOnly: creating,
  response: {
    200: {
      description: 'The task.',
      type: 'object',
      properties: { id: { type: 'string' }, upstream_id: { type: 'string' }, status: { type: 'string' }, created_at: instant },
    },
    ...METERED_ERRORS,
  },
};

export const EraseTaskSchema = {
  tags,
  summary: 'A subtitle erase task.',
  params: TaskIdParams,
  response: { 200: TaskRecord(LIVE_AS_PROCESSING, VideoResult), ...LOOKUP_ERRORS },
};

export const MinutesCreateSchema = {
  tags,
  summary: 'Creates a meeting minutes task (vendor-minutes or service-minutes).',
  description:
    'The recording’s length is read from its header (else two hours are held); one past two hours is refused (400), and one the upstream reports past two hours fails, refunded. Settled on the real duration (and the summary’s tokens for service-minutes).',
  docsOnly: { body: MinutesBody, ...creating },
  response: {
    200: {
      description: 'The task.',
      type: 'object',
      properties: {
        id: { type: 'string' },
        request_id: { type: 'string' },
        model: { type: 'string' },
        status: { type: 'string', enum: ['processing'] },
        created_at: instant,
      },
    },
    ...METERED_ERRORS,
  },
};

export const MinutesTaskSchema = {
  tags,
  summary: 'A meeting minutes task.',
  params: TaskIdParams,
  response: {
    200: TaskRecord(LIVE_AS_PROCESSING, {
      type: 'object',
      description: 'Once succeeded: the transcript with speakers and times; summary, chapters, todos, Q&A and translation as asked.',
    }),
    ...LOOKUP_ERRORS,
  },
};
