import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { jsonFile } from './media.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { durationFromUrl, outcomeOf, type SandboxTask, taskShelf } from './tasks.js';
import { hashOf, isRecord } from './text.js';

// Volcengine long-audio products (volcengine-formats.md §5): the lark minutes API (§5.1, task id in the body)
// and recognition 2.0 (§5.2, task id = the client's X-Api-Request-Id). Status rides in X-Api-Status-Code.

/** Audio length when the file URL carries no `duration_s=<N>`. */
export const DEFAULT_AUDIO_SECONDS = 60;

/** X-Api-Status-Code values of the /api/v3/auc products (§5.1, §5.2; 45000010 as seen answering a bad key). */
export const AUC_CODES = {
  ok: 20_000_000,
  processing: 20_000_001,
  queued: 20_000_002,
  badParams: 45_000_001,
  unauthorized: 45_000_010,
  notGranted: 45_000_030,
  badFormat: 45_000_151,
  busy: 55_000_031,
} as const;

const LARK_RESOURCE = 'volc.lark.minutes';
const RECOGNITION_RESOURCES = ['volc.seedasr.auc', 'volc.bigasr.auc'];
/** The lark task-level code a failed task reports (§5.1: 4811 download error). */
export const LARK_FAILED_CODE = 4811;

interface LarkFeatures {
  readonly sourceLang: string;
  readonly summarization: boolean;
  readonly chapters: boolean;
  readonly extraction: readonly string[];
  readonly translateTo: string | undefined;
}

interface LarkTask {
  readonly durationMs: number;
  readonly files: Record<string, string>;
}

interface RecognitionTask {
  readonly durationMs: number;
  /** Speakers told apart: 0 when speaker separation is off. */
  readonly speakers: number;
  /** A submit repeated with the same request id and body is accepted again, not a new task. */
  readonly bodyHash: string;
}

const LARK_TASKS = taskShelf<LarkTask>('minutes-lark');
const RECOGNITION_TASKS = taskShelf<RecognitionTask>('minutes-recognition');

const larkError = (status: number, message: string) => ({ Code: codeForStatus(status), Message: message });
const recognitionError = (status: number, message: string) => ({ code: codeForStatus(status), message });

function codeForStatus(status: number): number {
  if (status === 401) return AUC_CODES.unauthorized;
  if (status === 403) return AUC_CODES.notGranted;
  return status === 429 || status >= 500 ? AUC_CODES.busy : AUC_CODES.badParams;
}

const minutesRoute = (path: string, handle: SandboxRoute['handle'], errorBody: SandboxRoute['errorBody'], createsTask = false) =>
  ({ kind: 'minutes', method: 'POST', path, errorBody, createsTask, handle }) satisfies SandboxRoute;

export const larkSubmitRoute = minutesRoute('/api/v3/auc/lark/submit', submitLark, larkError, true);
export const larkQueryRoute = minutesRoute('/api/v3/auc/lark/query', queryLark, larkError);
export const recognitionSubmitRoute = minutesRoute('/api/v3/auc/bigmodel/submit', submitRecognition, recognitionError, true);
export const recognitionQueryRoute = minutesRoute('/api/v3/auc/bigmodel/query', queryRecognition, recognitionError);

function speechHeaders(code: number, message: string, ctx: SandboxContext): OutgoingHttpHeaders {
  return { 'x-api-status-code': String(code), 'x-api-message': message, 'x-tt-logid': hashOf([ctx.path, ctx.body]).slice(0, 20) };
}

/** Sends a refusal: HTTP status, X-Api-Status-Code and the body shape of the product. */
function refuse(ctx: SandboxContext, status: number, message: string, body: (status: number, message: string) => object): void {
  ctx.reply.json(status, body(status, message), speechHeaders(codeForStatus(status), message, ctx));
}

/** Why the credentials do not pass (`[status, message]`), or undefined when they do. */
function checkCredentials(headers: IncomingHttpHeaders, resources: readonly string[]): [number, string] | undefined {
  const hasKey = typeof headers['x-api-key'] === 'string' || (typeof headers['x-api-app-key'] === 'string' && typeof headers['x-api-access-key'] === 'string');
  if (!hasKey) return [401, 'Invalid X-Api-Key: send X-Api-Key, or X-Api-App-Key and X-Api-Access-Key'];
  const resource = headers['x-api-resource-id'];
  if (typeof resource !== 'string') return [400, 'X-Api-Resource-Id: required'];
  if (!resources.includes(resource)) return [403, `requested resource not granted: ${resource} (expected ${resources.join(' or ')})`];
  return undefined;
}

// ---- lark minutes (§5.1) ----

function submitLark(ctx: SandboxContext): void {
  const denied = checkCredentials(ctx.headers, [LARK_RESOURCE]);
  if (denied) return refuse(ctx, ...denied, larkError);
  const body = isRecord(ctx.body) ? ctx.body : {};
  const offline = isRecord(body.Input) && isRecord(body.Input.Offline) ? body.Input.Offline : {};
  if (typeof offline.FileURL !== 'string' || offline.FileURL === '') return refuse(ctx, 400, 'Input.Offline.FileURL: required', larkError);
  const seconds = durationFromUrl(offline.FileURL, DEFAULT_AUDIO_SECONDS);
  if (typeof seconds === 'string') return refuse(ctx, 400, `Input.Offline.FileURL: ${seconds}`, larkError);
  const features = larkFeatures(isRecord(body.Params) ? body.Params : {});
  const id = ctx.tasks.nextId(ctx.body);
  const durationMs = Math.round(seconds * 1000);
  const files = larkFiles(ctx, id, durationMs, features);
  ctx.tasks.create(LARK_TASKS, { id, outcome: outcomeOf(ctx.fault), data: { durationMs, files } });
  ctx.reply.json(200, { Data: { TaskID: id } }, speechHeaders(AUC_CODES.ok, 'OK', ctx));
}

function queryLark(ctx: SandboxContext): void {
  const denied = checkCredentials(ctx.headers, [LARK_RESOURCE]);
  if (denied) return refuse(ctx, ...denied, larkError);
  const id = isRecord(ctx.body) ? ctx.body.TaskID : undefined;
  if (typeof id !== 'string') return refuse(ctx, 400, 'TaskID: required', larkError);
  const task = ctx.tasks.get(LARK_TASKS, id);
  if (!task) return refuse(ctx, 400, `TaskID ${id}: no such task`, larkError);
  const phase = ctx.tasks.phase(task);
  const base = { TaskID: id, ErrCode: 0, ErrMessage: '' };
  let data: object;
  if (phase === 'succeeded') {
    // Duration is ours, not Volcengine's: the bill is per second of audio and the result files are URLs
    data = { ...base, Status: 'success', Result: task.data.files, Duration: task.data.durationMs / 1000 };
  } else if (phase === 'failed') {
    data = { ...base, Status: 'failed', ErrCode: LARK_FAILED_CODE, ErrMessage: 'audio download error (sandbox fault: task_outcome failed)' };
  } else {
    data = { ...base, Status: 'running' };
  }
  const code = phase === 'queued' ? AUC_CODES.queued : phase === 'running' ? AUC_CODES.processing : AUC_CODES.ok;
  ctx.reply.json(200, { Code: 0, Message: '', Data: data }, speechHeaders(code, 'OK', ctx));
}

const EXTRACTION_TYPES = ['todo_list', 'question_answer'];

function larkFeatures(params: Record<string, unknown>): LarkFeatures {
  const all = params.AllActivate === true;
  const extractionParams = isRecord(params.InformationExtractionParams) ? params.InformationExtractionParams : {};
  const types = Array.isArray(extractionParams.Types) ? EXTRACTION_TYPES.filter((t) => (extractionParams.Types as unknown[]).includes(t)) : EXTRACTION_TYPES;
  const translationParams = isRecord(params.TranslationParams) ? params.TranslationParams : {};
  // the vendor's own spelling is TranslationEnable (beside SummarizationEnabled); both are taken
  const translate = all || params.TranslationEnable === true || params.TranslationEnabled === true;
  return {
    sourceLang: typeof params.SourceLang === 'string' ? params.SourceLang : 'zh_cn',
    summarization: all || params.SummarizationEnabled === true,
    chapters: all || params.ChapterEnabled === true,
    extraction: all ? EXTRACTION_TYPES : params.InformationExtractionEnabled === true ? types : [],
    translateTo: translate ? (typeof translationParams.TargetLang === 'string' ? translationParams.TargetLang : 'en_us') : undefined,
  };
}

/** Registers the result files of a task (only those its features ask for) and answers `Result`. */
function larkFiles(ctx: SandboxContext, id: string, durationMs: number, features: LarkFeatures): Record<string, string> {
  const said = sentences(durationMs);
  const file = (suffix: string, build: () => unknown) => ctx.media.put(ctx.baseUrl, `minutes-${id}-${suffix}.json`, jsonFile(build));
  const speaker = (s: Sentence) => ({ id: s.speaker, name: `说话人${s.speaker}`, type: 0 });
  const files: Record<string, string> = {
    AudioTranscriptionFile: file('transcription', () =>
      said.map((s) => ({ ...ids(s), lang: features.sourceLang, content: s.text, start_time: s.start, end_time: s.end, speaker: speaker(s) })),
    ),
  };
  if (features.chapters) {
    files.ChapterFile = file('chapters', () => ({
      chapter_summary: chapters(said).map((group, k) => ({
        start_time: group[0]?.start,
        end_time: group[group.length - 1]?.end,
        title: `Chapter ${k + 1}`,
        summary: `Sentences ${group[0]?.index} to ${group[group.length - 1]?.index}.`,
      })),
    }));
  }
  const first = said[0] as Sentence;
  if (features.extraction.length > 0) {
    const todo = { content: `Follow up on: ${first.text}`, executor: [`说话人${first.speaker}`], execution_ddl: '' };
    const extracted: Record<string, unknown> = {};
    if (features.extraction.includes('todo_list')) {
      extracted.todo_list = [{ ...todo, execution_time: [], sentence_id: ['1'], start_time: first.start, todo_idx: 0, polished_res: todo }];
    }
    if (features.extraction.includes('question_answer')) {
      extracted.question_answer = [{ question: 'What was said first?', answer: first.text, question_time: '0', question_type: 'fact', sentence_id: '1' }];
    }
    files.InformationExtractionFile = file('information-extraction', () => extracted);
  }
  if (features.summarization) {
    const paragraph = `${said.length} sentences from ${Math.min(2, said.length)} speakers over ${durationMs / 1000} s.`;
    files.SummarizationFile = file('summary', () => ({ title: 'Sandbox meeting', paragraph }));
  }
  const target = features.translateTo;
  if (target !== undefined) {
    files.TranslationFile = file('translation', () =>
      said.map((s) => ({
        ...ids(s),
        source_lang: features.sourceLang,
        target_lang: target,
        content: s.text,
        translation_content: `[${target}] ${s.text}`,
        start_time: s.start,
        end_time: s.end,
        speaker: speaker(s),
      })),
    );
  }
  return files;
}

// ---- recognition 2.0 (§5.2) ----

function submitRecognition(ctx: SandboxContext): void {
  const denied = checkCredentials(ctx.headers, RECOGNITION_RESOURCES);
  if (denied) return refuse(ctx, ...denied, recognitionError);
  const id = ctx.headers['x-api-request-id'];
  if (typeof id !== 'string' || id === '') return refuse(ctx, 400, 'X-Api-Request-Id: required, it names the task', recognitionError);
  const body = isRecord(ctx.body) ? ctx.body : {};
  const url = isRecord(body.audio) ? body.audio.url : undefined;
  if (typeof url !== 'string' || url === '') return refuse(ctx, 400, 'audio.url: required', recognitionError);
  const seconds = durationFromUrl(url, DEFAULT_AUDIO_SECONDS);
  if (typeof seconds === 'string') return refuse(ctx, 400, `audio.url: ${seconds}`, recognitionError);
  const bodyHash = hashOf(ctx.body);
  const existing = ctx.tasks.get(RECOGNITION_TASKS, id);
  if (existing && existing.data.bodyHash !== bodyHash) {
    return refuse(ctx, 400, `X-Api-Request-Id ${id}: already submitted with another body`, recognitionError);
  }
  if (!existing) {
    const speakers = isRecord(body.request) && body.request.enable_speaker_info === true ? speakerCount(body.request.speaker_number) : 0;
    const data = { durationMs: Math.round(seconds * 1000), speakers, bodyHash };
    ctx.tasks.create(RECOGNITION_TASKS, { id, outcome: outcomeOf(ctx.fault), data });
  }
  ctx.reply.send(200, '', { ...speechHeaders(AUC_CODES.ok, 'OK', ctx), 'x-api-request-id': id });
}

/** The number of speakers the caller said there are, else the two the sandbox's meetings have. */
function speakerCount(stated: unknown): number {
  return typeof stated === 'number' && Number.isSafeInteger(stated) && stated > 0 ? stated : DEFAULT_SPEAKERS;
}

function queryRecognition(ctx: SandboxContext): void {
  const denied = checkCredentials(ctx.headers, RECOGNITION_RESOURCES);
  if (denied) return refuse(ctx, ...denied, recognitionError);
  const id = ctx.headers['x-api-request-id'];
  if (typeof id !== 'string' || id === '') return refuse(ctx, 400, 'X-Api-Request-Id: required, it names the task', recognitionError);
  const task = ctx.tasks.get(RECOGNITION_TASKS, id);
  if (!task) return refuse(ctx, 400, `X-Api-Request-Id ${id}: no such task`, recognitionError);
  const phase = ctx.tasks.phase(task);
  const headers = (code: number, message: string) => ({ ...speechHeaders(code, message, ctx), 'x-api-request-id': id });
  if (phase === 'queued') return ctx.reply.json(200, {}, headers(AUC_CODES.queued, 'queued'));
  if (phase === 'running') return ctx.reply.json(200, {}, headers(AUC_CODES.processing, 'processing'));
  if (phase === 'failed') {
    const message = 'invalid audio format (sandbox fault: task_outcome failed)';
    return ctx.reply.json(200, { code: AUC_CODES.badFormat, message }, headers(AUC_CODES.badFormat, message));
  }
  ctx.reply.json(200, recognitionResult(task), headers(AUC_CODES.ok, 'OK'));
}

function recognitionResult(task: SandboxTask<RecognitionTask>) {
  const said = sentences(task.data.durationMs, Math.max(1, task.data.speakers));
  const utterances = said.map((s) => ({
    text: s.text,
    start_time: s.start,
    end_time: s.end,
    definite: true,
    // Recognition 2.0 times every word inside its utterance (ms), whether or not it was asked for.
    words: wordTimings(s.text, s.start, s.end),
    ...(task.data.speakers > 0 && { additions: { speaker: String(s.speaker) } }),
  }));
  return {
    audio_info: { duration: task.data.durationMs },
    result: { text: said.map((s) => s.text).join(' '), utterances },
  };
}

// ---- the transcript both products hear ----

/** At most this many sentences, however long the audio: result files stay small. */
export const MAX_SENTENCES = 100;
export const SENTENCE_MS = 10_000;
/** Speakers in a sandbox meeting unless the request says how many. */
const DEFAULT_SPEAKERS = 2;

interface Sentence {
  readonly index: number;
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly speaker: number;
}

/**
 * One sentence per 10 s of audio (at most 100, at least 1), cut at even ms, spoken by speakers 1 to
 * `speakers` (two by default) in turn: `Sandbox sentence <i>.`
 */
export function sentences(durationMs: number, speakers = DEFAULT_SPEAKERS): Sentence[] {
  const count = Math.min(MAX_SENTENCES, Math.max(1, Math.ceil(durationMs / SENTENCE_MS)));
  return Array.from({ length: count }, (_, i) => ({
    index: i + 1,
    text: `Sandbox sentence ${i + 1}.`,
    start: Math.floor((i * durationMs) / count),
    end: Math.floor(((i + 1) * durationMs) / count),
    speaker: (i % speakers) + 1,
  }));
}

/** Five sentences to a paragraph, and a chapter per paragraph. */
function chapters(said: Sentence[]): Sentence[][] {
  const groups: Sentence[][] = [];
  for (let i = 0; i < said.length; i += 5) groups.push(said.slice(i, i + 5));
  return groups;
}

const ids = (s: Sentence) => ({ sentence_id: String(s.index), paragraph_id: String(Math.floor((s.index - 1) / 5) + 1) });

/** The words of an utterance, its time shared out evenly between them (ms, as the upstream gives them). */
function wordTimings(text: string, start: number, end: number): { text: string; start_time: number; end_time: number }[] {
  const words = text.split(/\s+/).filter(Boolean);
  const step = (end - start) / Math.max(words.length, 1);
  return words.map((word, i) => ({ text: word, start_time: Math.round(start + i * step), end_time: Math.round(start + (i + 1) * step) }));
}
