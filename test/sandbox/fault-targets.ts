// The sandbox calls a fault matrix aims at: one per HTTP kind, and for the task kinds both the create and the
// poll. Each is a valid request, so without a fault it is answered normally.
import { ANTHROPIC, AUTH, postJson } from './sandbox-client.js';

export interface Call {
  /** The path a rule selects this call by: a poll's own, since a create's path can be a prefix of it. */
  readonly path: string;
  readonly send: (signal?: AbortSignal) => Promise<Response>;
}

export interface Target {
  readonly name: string;
  readonly kind: string;
  /** Makes what the call needs (a poll needs its task) before any fault is in place. */
  readonly prepare: (base: string) => Promise<Call>;
}

const VIDEO_TASKS = '/api/v3/contents/generations/tasks';
const LARK = { 'x-api-key': 'k', 'x-api-resource-id': 'volc.lark.minutes', 'content-type': 'application/json' };
const ASR = { 'x-api-key': 'k', 'x-api-resource-id': 'volc.bigasr.auc', 'x-api-request-id': 'rec-1', 'content-type': 'application/json' };
const SPEECH = { 'x-api-key': 'volc-key', 'x-api-resource-id': 'seed-tts-2.0', 'content-type': 'application/json' };
const AUDIO_URL = 'https://files.example/a.wav?duration_s=12';

const post =
  (path: string, body: unknown, headers: Record<string, string> = AUTH) =>
  (base: string): Call => ({
    path,
    send: (signal) => postJson(`${base}${path}`, body, headers, signal),
  });

const get =
  (path: string) =>
  (base: string): Call => ({
    path,
    send: (signal) => fetch(`${base}${path}`, { headers: AUTH, signal }),
  });

/** A call that needs nothing made first. */
const ready = (name: string, kind: string, call: (base: string) => Call): Target => ({
  name,
  kind,
  prepare: async (base) => call(base),
});

/** A poll: creates its task with `create`, reads the task's id from the answer, then polls it with `poll`. */
const poll = (name: string, kind: string, create: (base: string) => Call, id: (body: any) => string, poll: (id: string) => (base: string) => Call): Target => ({
  name,
  kind,
  async prepare(base) {
    const created = await create(base).send();
    if (created.status !== 200) throw new Error(`${name}: creating the task answered ${created.status}`);
    // recognition's submit answers an empty body: its task is named by the request id it was sent
    const text = await created.text();
    return poll(id(text === '' ? {} : JSON.parse(text)))(base);
  },
});

const chat = (stream: boolean) => ({ model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:20]]' }], stream });
const responses = (stream: boolean) => ({ model: 'sandbox-chat', input: '[[words:20]]', stream });
const messages = (stream: boolean) => ({ model: 'sandbox-claude', max_tokens: 100, messages: [{ role: 'user', content: '[[words:20]]' }], stream });
const speech = { req_params: { text: 'One. Two. Three. Four. Five.', speaker: 'zh_female_vv_uranus_bigtts' } };
const larkSubmit = post('/api/v3/auc/lark/submit', { Input: { Offline: { FileURL: AUDIO_URL } } }, LARK);
const recognitionSubmit = post('/api/v3/auc/bigmodel/submit', { audio: { url: AUDIO_URL } }, ASR);
const eraseSubmit = post('/api/v1/tools/erase-subtitle', { video_url: 'https://files.example/v.mp4' });
const videoCreate = post(VIDEO_TASKS, { model: 'sandbox-video', content: [{ type: 'text', text: 'a cat yawns' }] });

/** Answers that are one JSON body (or, for recognition's submit, an empty one). */
export const PLAIN_TARGETS: readonly Target[] = [
  ready('chat', 'chat', post('/v1/chat/completions', chat(false))),
  ready('responses', 'responses', post('/v1/responses', responses(false))),
  ready('messages', 'messages', post('/v1/messages', messages(false), ANTHROPIC)),
  ready('images', 'images', post('/v1/images/generations', { model: 'sandbox-image', prompt: 'a cat in a hat' })),
  ready('web search', 'search', post('/search_api/web_search', { Query: 'q', SearchType: 'web' })),
  ready('global search', 'search', post('/search_api/global_search', { Query: 'q' })),
  ready('video create', 'video', videoCreate),
  poll(
    'video poll',
    'video',
    videoCreate,
    (body) => body.id,
    (id) => get(`${VIDEO_TASKS}/${id}`),
  ),
  ready('minutes lark submit', 'minutes', larkSubmit),
  poll(
    'minutes lark query',
    'minutes',
    larkSubmit,
    (body) => body.Data.TaskID,
    (id) => post('/api/v3/auc/lark/query', { TaskID: id }, LARK),
  ),
  ready('minutes recognition submit', 'minutes', recognitionSubmit),
  poll(
    'minutes recognition query',
    'minutes',
    recognitionSubmit,
    () => 'rec-1',
    () => post('/api/v3/auc/bigmodel/query', {}, ASR),
  ),
  ready('erase submit', 'erase', eraseSubmit),
  poll(
    'erase poll',
    'erase',
    eraseSubmit,
    (body) => body.task_id,
    (id) => get(`/api/v1/tasks/${id}`),
  ),
];

/** How a test reads one protocol's stream back. */
export interface StreamTarget extends Target {
  /** The chunks as the sandbox wrote them: SSE events, or lines. */
  chunks(text: string): string[];
  /** The JSON a chunk carries; throws when it does not parse. */
  payload(chunk: string): unknown;
  /** The protocol's end marker: what a faulted stream must never send. */
  isEnd(chunk: string): boolean;
  /** The error chunks an `error_after_chunks` fault sends after `sent` chunks, as `summary` shows them. */
  expectedError(sent: number): unknown[];
  /** What of a payload the error assertion compares (a whole failed Response is more than it needs). */
  summary(payload: any): unknown;
}

const sseChunks = (text: string) => text.split(/(?<=\n\n)/).filter((chunk) => chunk !== '');
const sseData = (chunk: string) => JSON.parse(chunk.slice(chunk.indexOf('data: ') + 'data: '.length));
const message = (sent: number) => `sandbox fault: error after ${sent} chunks`;
const whole = (payload: unknown) => payload;

export const STREAM_TARGETS: readonly StreamTarget[] = [
  {
    ...ready('chat stream', 'chat', post('/v1/chat/completions', chat(true))),
    chunks: sseChunks,
    payload: (chunk) => (chunk === 'data: [DONE]\n\n' ? '[DONE]' : sseData(chunk)),
    isEnd: (chunk) => chunk === 'data: [DONE]\n\n',
    expectedError: (sent) => [{ error: { message: message(sent), type: 'server_error', param: null, code: null } }],
    summary: whole,
  },
  {
    ...ready('responses stream', 'responses', post('/v1/responses', responses(true))),
    chunks: sseChunks,
    payload: sseData,
    isEnd: (chunk) => chunk.startsWith('event: response.completed\n'),
    expectedError: (sent) => [
      { type: 'error', sequence_number: sent, error: { type: 'server_error', code: 'server_error', message: message(sent), param: null } },
      { type: 'response.failed', sequence_number: sent + 1, status: 'failed', error: { code: 'server_error', message: message(sent) } },
    ],
    summary: (p) =>
      p.type === 'response.failed' ? { type: p.type, sequence_number: p.sequence_number, status: p.response.status, error: p.response.error } : p,
  },
  {
    ...ready('messages stream', 'messages', post('/v1/messages', messages(true), ANTHROPIC)),
    chunks: sseChunks,
    payload: sseData,
    isEnd: (chunk) => chunk.startsWith('event: message_stop\n'),
    expectedError: (sent) => [{ type: 'error', error: { type: 'overloaded_error', message: `Overloaded (${message(sent)})` } }],
    summary: whole,
  },
  {
    ...ready('speech', 'speech', post('/api/v3/tts/unidirectional', speech, SPEECH)),
    chunks: (text) => text.split(/(?<=\n)/).filter((line) => line !== ''),
    payload: (line) => JSON.parse(line),
    isEnd: (line) => line.startsWith('{"code":20000000,'),
    expectedError: (sent) => [{ code: 55000000, message: message(sent), data: null }],
    summary: whole,
  },
];

/** Every HTTP call of every kind: plain answers and streams. */
export const HTTP_TARGETS: readonly Target[] = [...PLAIN_TARGETS, ...STREAM_TARGETS];
