// JSON schema of the account's gallery (GET /v1/account/gallery), kept apart from account.ts,
// which holds the rest of the account API and is long enough already.

import { instant, instantOrNull, page, query, READ_ERRORS, stringOrNull, tags } from './account.js';
import { errorResponses } from './errors.js';
import { CursorParam, PageLimitParam } from './query.js';

const url = (description: string) => ({ type: 'string', description }) as const;

const Media = {
  type: 'object',
  required: ['type', 'url', 'poster_url'],
  properties: {
    type: { type: 'string', enum: ['image', 'video'], description: 'What the URL holds: an image to show, a video to play.' },
    url: url('Where the upstream keeps the file, as the task’s GET answers it; such links often expire after a day or so.'),
    poster_url: stringOrNull('A still of the video (its last frame) when the task asked for one; null otherwise.'),
  },
} as const;

const Item = {
  type: 'object',
  required: ['id', 'kind', 'model', 'created_at', 'finished_at', 'media', 'original'],
  properties: {
    id: { type: 'string', description: 'The task id; its kind’s GET endpoint returns the whole record.' },
    kind: { type: 'string', enum: ['image', 'video', 'erase'], description: 'What the task made: images, a video, or a video with its subtitles erased.' },
    model: { type: 'string', description: 'The model the task ran on.' },
    created_at: instant('When the task was created.'),
    finished_at: instantOrNull('When the task succeeded.'),
    media: {
      type: 'array',
      items: Media,
      description: 'What the task made: one video, or each image with a URL (images answered inline as b64_json are left to the task’s GET).',
    },
    original: {
      type: ['object', 'null'],
      required: ['task_id', 'type', 'url'],
      description: 'For an erase task, the video it erased the subtitles of, to show beside the result; null for other kinds.',
      properties: {
        task_id: { type: 'string', description: 'The video task that made the original.' },
        type: { type: 'string', enum: ['video'], description: 'Always video.' },
        url: url('The original video’s URL.'),
      },
    },
  },
} as const;

export const GallerySchema = {
  tags,
  summary: 'The media the account generated: its succeeded image, video and erase tasks, newest first, in pages.',
  querystring: query({
    kind: { type: 'string', enum: ['image', 'video', 'erase'], description: 'Only tasks of this kind.' },
    limit: PageLimitParam,
    cursor: CursorParam,
  }),
  response: { 200: page(Item, 'A page of the gallery.'), ...errorResponses(400), ...READ_ERRORS },
};
