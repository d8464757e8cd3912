// One field of a valid task submission made invalid — video (both paths, every ARK prefix),
// minutes and subtitle erase: a 400 naming the field, no task, no hold, no charge.
import fc from 'fast-check';
import { fieldProbes, type JsonEndpoint } from './endpoint.js';
import type { PropertySpec } from './harness.js';
import {
  badBoolean,
  badEnum,
  badInteger,
  badString,
  type FieldMutation,
  modelMutations,
  mutate,
  REMOVE,
  removeField,
  unknownField,
  wrongType,
} from './values.js';

const MAX_SEED = 2 ** 32 - 1;
/** URLs no http(s) rule takes: other schemes, credentials, blanks, no host, past 8192 characters. */
const badHttpUrl = fc.oneof(
  wrongType('string', 'null'),
  fc.constantFrom(
    '',
    'ftp://example.com/a.mp3',
    'javascript:alert(1)',
    'http://user:pw@example.com/a.mp3',
    'not a url',
    'http://',
    '//example.com/a.mp3',
    'file:///etc/passwd',
    'http://exa mple.com/a.mp3',
    'data:audio/mp3;base64,AAAA',
    'mailto:a@example.com',
  ),
  fc.integer({ min: 8200, max: 9000 }).map((n) => `http://example.com/${'a'.repeat(n)}.mp3`),
);
const nonNullWrong = (...accepted: Parameters<typeof wrongType>) => wrongType(...accepted, 'null');
/** A content list whose items break a rule of spec 4.4 (roles, counts, combinations, URLs). */
const image = (url = 'https://example.com/a.png', role?: string) => ({ type: 'image_url', image_url: { url }, ...(role && { role }) });
const badContent = fc
  .oneof(
    fc.oneof(nonNullWrong('array'), fc.constant([])),
    fc.array(nonNullWrong('object'), { minLength: 1, maxLength: 2 }),
    fc.constantFrom<unknown>(
      [{ text: 'no type' }],
      [{ type: 'text' }],
      [{ type: 'text', text: 5 }],
      [{ type: 'text', text: '   ' }],
      [{ type: 'text', text: 'x', role: 'first_frame' }],
      [{ type: 'sound', text: 'x' }],
      [{ type: 'text', text: 'x', image_url: { url: 'https://example.com/a.png' } }],
      [{ type: 'text', text: 'x', extra: 1 }],
      [{ type: 'image_url' }],
      [{ type: 'image_url', image_url: 'https://example.com/a.png' }],
      [{ type: 'image_url', image_url: {} }],
      [{ type: 'image_url', image_url: { url: 5 } }],
      [{ type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } }],
      [image('ftp://example.com/a.png')],
      [image('data:text/plain;base64,AAAA')],
      [{ type: 'video_url', video_url: { url: 'data:video/mp4;base64,AAAA' } }],
      [image(undefined, 'reference_video')],
      [image(undefined, 'hero')],
      [image(), image()],
      [image(undefined, 'first_frame'), image(undefined, 'first_frame')],
      [image(undefined, 'last_frame')],
      [image(undefined, 'first_frame'), image(undefined, 'reference_image')],
      [{ type: 'audio_url', audio_url: { url: 'https://example.com/a.mp3' } }],
      Array.from({ length: 10 }, () => image(undefined, 'reference_image')),
      [{ type: 'video_url', video_url: { url: 'https://example.com/a.mp4' }, role: 'first_frame' }],
    ),
  )
  .map((value) => ({ path: ['content'], value, names: ['content'] }) satisfies FieldMutation);

const VIDEO_FIELDS = [
  'model',
  'content',
  'resolution',
  'ratio',
  'duration',
  'seed',
  'generate_audio',
  'return_last_frame',
  'camera_fixed',
  'watermark',
  'service_tier',
  'callback_url',
  'safety_identifier',
];
const video: JsonEndpoint = {
  name: 'videos',
  paths: ['/v1/videos/generations', ...['/api/v3', '/v3', '/api/v1', '/v1'].map((prefix) => `${prefix}/contents/generations/tasks`)],
  bases: [
    { model: 'sandbox-video', content: [{ type: 'text', text: 'a cat' }] },
    {
      model: 'sandbox-video',
      content: [{ type: 'text', text: 'a dog' }, image(undefined, 'first_frame')],
      resolution: '1080p',
      ratio: '16:9',
      duration: 10,
      seed: 7,
      watermark: true,
    },
  ],
  mutations: fc.oneof(
    modelMutations('video', ['model'], { nullIsMissing: true }),
    removeField(['content']),
    badContent,
    mutate(['resolution'], badEnum(['480p', '720p', '1080p', '768P', '2K'], { nullable: true })),
    mutate(['ratio'], badEnum(['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'], { nullable: true })),
    mutate(
      ['duration'],
      fc.oneof(
        badInteger({ min: 1, max: 60, nullable: true }).filter((v) => v !== -1),
        fc.constantFrom(-2, 0, 61),
      ),
    ),
    mutate(['seed'], badInteger({ min: -1, max: MAX_SEED, nullable: true })),
    ...['generate_audio', 'return_last_frame', 'camera_fixed', 'watermark'].map((field) => mutate([field], badBoolean({ nullable: true }))),
    mutate(['service_tier'], badEnum(['default', 'flex'], { nullable: true })),
    mutate(['callback_url'], badHttpUrl),
    mutate(
      ['safety_identifier'],
      fc.oneof(
        nonNullWrong('string'),
        fc.constant(''),
        fc.integer({ min: 65, max: 200 }).map((n) => '🎬'.repeat(n)),
      ),
    ),
    unknownField(VIDEO_FIELDS).map((field) => ({ path: [field], value: 1, names: [`${field}: unknown field`] })),
  ),
};

const MINUTES_FIELDS = [
  'model',
  'file_url',
  'file_type',
  'source_lang',
  'all_activate',
  'speaker_identification',
  'number_of_speakers',
  'hot_words',
  'need_word_time_series',
  'features',
  'callback_url',
];
const minutes: JsonEndpoint = {
  name: 'minutes',
  paths: ['/v1/audio/minutes'],
  bases: [
    { model: 'vendor-minutes', file_url: 'http://127.0.0.1:9/meeting.mp3', features: { summary: true } },
    {
      model: 'vendor-minutes',
      file_url: 'https://example.com/talk.mp4',
      file_type: 'video',
      all_activate: true,
      features: { translate: true, target_lang: 'en_us' },
    },
  ],
  mutations: fc.oneof(
    modelMutations('minutes', ['model'], { nullIsMissing: true }).map((m) => ({ ...m, names: [...m.names, 'model:'] })),
    removeField(['file_url']),
    mutate(['file_url'], badHttpUrl),
    mutate(['file_type'], badEnum(['audio', 'video'], { nullable: true })),
    mutate(['source_lang'], badEnum(['zh_cn', 'en_us'], { nullable: true })),
    ...['all_activate', 'speaker_identification', 'need_word_time_series'].map((field) => mutate([field], badBoolean({ nullable: true }))),
    mutate(['number_of_speakers'], badInteger({ min: 0, max: Number.MAX_SAFE_INTEGER, nullable: true })),
    mutate(['hot_words'], fc.oneof(nonNullWrong('string'), fc.constantFrom('[abc', '[1, 2]', '[{"w":"x"}]', ' [null]', '[{"word": 5}]'))),
    mutate(
      ['features'],
      fc.oneof(
        nonNullWrong('object'),
        fc.constantFrom<unknown>({ summary: 'yes' }, { qa: true, question_answer: false }, { summary: true, target_lang: 'fr' }, { summary: true, tldr: true }),
      ),
      ['features'],
    ),
    mutate(['callback_url'], badHttpUrl),
    unknownField(MINUTES_FIELDS).map((field) => ({ path: [field], value: 1, names: [`${field}: unknown field`] })),
  ),
};
// Only on the first base (no all_activate, no file_type): vendor-minutes with no feature on, and a
// file_url whose suffix says nothing, which the refusal answers by naming file_type.
const minutesFirstBase: JsonEndpoint = {
  ...minutes,
  name: 'minutes without all_activate or file_type',
  bases: [minutes.bases[0]!],
  mutations: fc.oneof(
    fc
      .constantFrom<unknown>(REMOVE, null, {}, { summary: false }, { translate: false, target_lang: 'en_us' })
      .map((value) => ({ path: ['features'], value, names: ['features'] })),
    fc
      .constantFrom('http://127.0.0.1:9/meeting', 'https://example.com/a.txt?x=.mp3', 'https://example.com/mp3')
      .map((value) => ({ path: ['file_url'], value, names: ['file_type'] })),
  ),
};

// No video task has this id for the account: every erase is refused on its fields or on the source.
const erase: JsonEndpoint = {
  name: 'erase-subtitle',
  paths: ['/v1/videos/erase-subtitle'],
  bases: [{ video_task_id: 'task_nope' }, { video_task_id: 'cgt-2025', callback_url: 'https://example.com/cb', model: 'sandbox-erase' }],
  mutations: fc.oneof(
    removeField(['video_task_id']),
    mutate(['video_task_id'], fc.oneof(badString(), fc.string({ minLength: 1, maxLength: 40 }))),
    mutate(['callback_url'], badString()),
    fc.oneof(fc.constant(''), wrongType('string')).map((value) => ({ path: ['model'], value, names: ['model'] })),
    unknownField(['video_task_id', 'callback_url', 'model']).map((field) => ({ path: [field], value: 1, names: [`${field}: unknown field`] })),
  ),
};

const ENDPOINTS: [JsonEndpoint, number][] = [
  [video, 140],
  [minutes, 100],
  [minutesFirstBase, 20],
  [erase, 60],
];

export const taskFieldProperties: PropertySpec[] = ENDPOINTS.map(([endpoint, numRuns]) => ({
  name: `${endpoint.name}: one invalid field is a 400 naming it, and no task is made`,
  probes: ({ key }) => fieldProbes(endpoint, key),
  numRuns,
}));
