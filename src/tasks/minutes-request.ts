// POST /v1/audio/minutes (spec 4.3): the body checked after Fastify's JSON parse, refused with a message naming
// the field, or returned with defaults applied; and the two upstream submit bodies (protocols §5.1, §5.2).
// Pure: no I/O, no clock, no ids (the caller passes the request id).
import { invalidRequest } from '../errors.js';
import { type Fields, given, isFields, isOneOf, oneOf, readBoolean, readEnum, readHttpUrl } from './fields.js';

export { MAX_URL_LENGTH } from './fields.js';

export const MINUTES_MODELS = ['vendor-minutes', 'service-minutes'] as const;
/** Spec 8: a minutes recording lasts at most two hours. */
export const MAX_MINUTES_SECONDS = 2 * 60 * 60;
export const MINUTES_LANGS = ['zh_cn', 'en_us'] as const;
export const MINUTES_FILE_TYPES = ['audio', 'video'] as const;
export const AUDIO_SUFFIXES = ['mp3', 'wav', 'aac', 'flac', 'ogg', 'm4a', 'amr', 'opus'] as const;
export const VIDEO_SUFFIXES = ['mp4', 'avi', 'mkv', 'mov', 'flv', 'wmv', 'webm'] as const;

export type MinutesLang = (typeof MINUTES_LANGS)[number];
export type MinutesFileType = (typeof MINUTES_FILE_TYPES)[number];

export interface MinutesFeatures {
  summary: boolean;
  chapters: boolean;
  todos: boolean;
  /** Q&A extraction; the body may call it `qa` or `question_answer`. */
  qa: boolean;
  translate: boolean;
  /** Always set: with two languages, a translation goes to the one that is not `source_lang`. */
  target_lang: MinutesLang;
}

interface MinutesCommon {
  file_url: string;
  file_type: MinutesFileType;
  source_lang: MinutesLang;
  number_of_speakers: number;
  /** The words, split and trimmed; empty when none. */
  hot_words: string[];
  need_word_time_series: boolean;
  callback_url?: string;
  /** The recording's length as its header states it, read at creation; absent when it could not be read. */
  file_seconds?: number;
}

export interface VendorMinutesRequest extends MinutesCommon {
  model: 'vendor-minutes';
  all_activate: boolean;
  speaker_identification: boolean;
  features: MinutesFeatures;
}

/** `all_activate` and `features` do not apply to service-minutes and are normalised away. */
export interface ServiceMinutesRequest extends MinutesCommon {
  model: 'service-minutes';
  speaker_identification: true;
}

export type MinutesRequest = VendorMinutesRequest | ServiceMinutesRequest;

/** `POST /api/v3/auc/lark/submit` (§5.1). */
export interface LarkMinutesSubmitBody {
  Input: { Offline: { FileURL: string; FileType: MinutesFileType } };
  Params: {
    AllActivate: boolean;
    SourceLang: MinutesLang;
    AudioTranscriptionEnable: true;
    AudioTranscriptionParams: { SpeakerIdentification: boolean; NumberOfSpeaker: number; HotWords?: string; NeedWordTimeSeries: boolean };
    TranslationEnable: boolean;
    TranslationParams?: { TargetLang: MinutesLang };
    InformationExtractionEnabled: boolean;
    InformationExtractionParams?: { Types: ('todo_list' | 'question_answer')[] };
    SummarizationEnabled: boolean;
    SummarizationParams?: { Types: ['summary'] };
    ChapterEnabled: boolean;
  };
}

/** `POST /api/v3/auc/bigmodel/submit` (§5.2). */
export interface BigmodelSubmitBody {
  user: { uid: string };
  audio: { url: string; format: string; codec?: 'opus'; language?: 'en-US' };
  request: {
    model_name: 'bigmodel';
    enable_itn: true;
    enable_punc: true;
    enable_speaker_info: true;
    show_utterances: true;
    /** Absent when the caller left the count to the algorithm (number_of_speakers 0). */
    speaker_number?: number;
    corpus?: { context: string };
  };
}

const TOP_LEVEL = new Set([
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
]);
const FEATURE_FIELDS = new Set(['summary', 'chapters', 'todos', 'qa', 'question_answer', 'translate', 'target_lang']);
const OTHER_LANG: Record<MinutesLang, MinutesLang> = { zh_cn: 'en_us', en_us: 'zh_cn' };

/**
 * Checks a minutes body and applies the defaults of spec 4.3. Unknown fields are refused, as on the video
 * path: a misspelt option (`speaker_identifcation`) would otherwise be dropped without a word. `null`
 * counts as absent for optional fields.
 */
export function normaliseMinutesRequest(body: unknown): MinutesRequest {
  if (!isFields(body)) throw invalidRequest('body: must be a JSON object');
  const model = given(body, 'model');
  if (model === undefined || model === '') throw invalidRequest('model field is required');
  if (!isOneOf(model, MINUTES_MODELS)) throw invalidRequest(`model: ${oneOf(MINUTES_MODELS)}`);
  for (const field of Object.keys(body)) {
    if (!TOP_LEVEL.has(field)) throw invalidRequest(`${field}: unknown field`);
  }

  const fileUrl = readHttpUrl(body, 'file_url');
  if (fileUrl === undefined) throw invalidRequest('file_url field is required');
  const fileType = readEnum(body, 'file_type', MINUTES_FILE_TYPES, undefined) ?? inferFileType(fileUrl);
  if (fileType === undefined) {
    throw invalidRequest('file_type: cannot be inferred from the file_url suffix; set it to "audio" or "video"');
  }
  const sourceLang = readEnum(body, 'source_lang', MINUTES_LANGS, 'zh_cn');
  const speakerIdentification = readBoolean(body, 'speaker_identification', true);
  const numberOfSpeakers = given(body, 'number_of_speakers') ?? 0;
  if (typeof numberOfSpeakers !== 'number' || !Number.isSafeInteger(numberOfSpeakers) || numberOfSpeakers < 0) {
    throw invalidRequest('number_of_speakers: must be an integer of 0 or more');
  }
  const common: MinutesCommon = {
    file_url: fileUrl,
    file_type: fileType,
    source_lang: sourceLang,
    number_of_speakers: numberOfSpeakers,
    hot_words: readHotWords(body),
    need_word_time_series: readBoolean(body, 'need_word_time_series', false),
  };
  const callbackUrl = readHttpUrl(body, 'callback_url');
  if (callbackUrl !== undefined) common.callback_url = callbackUrl;

  if (model === 'service-minutes') {
    // Spec 4.3: service-minutes ignores all_activate and features, and always separates speakers.
    return { model, ...common, speaker_identification: true };
  }
  const allActivate = readBoolean(body, 'all_activate', false);
  const features = readFeatures(given(body, 'features'), sourceLang);
  const anyFeature = features.summary || features.chapters || features.todos || features.qa || features.translate;
  if (!allActivate && !anyFeature) throw invalidRequest('features: vendor-minutes needs all_activate or at least one feature');
  return { model, ...common, all_activate: allActivate, speaker_identification: speakerIdentification, features };
}

/** The lark minutes submit body. `all_activate` turns every ability on, so each is sent as enabled with it. */
export function vendorMinutesSubmitBody(req: VendorMinutesRequest): LarkMinutesSubmitBody {
  const all = req.all_activate;
  const translate = all || req.features.translate;
  const extract = [...(all || req.features.todos ? ['todo_list' as const] : []), ...(all || req.features.qa ? ['question_answer' as const] : [])];
  const summarise = all || req.features.summary;
  const transcription: LarkMinutesSubmitBody['Params']['AudioTranscriptionParams'] = {
    SpeakerIdentification: req.speaker_identification,
    NumberOfSpeaker: req.number_of_speakers,
    NeedWordTimeSeries: req.need_word_time_series,
  };
  if (req.hot_words.length > 0) transcription.HotWords = JSON.stringify(req.hot_words.map((word) => ({ word })));
  const params: LarkMinutesSubmitBody['Params'] = {
    AllActivate: all,
    SourceLang: req.source_lang,
    AudioTranscriptionEnable: true,
    AudioTranscriptionParams: transcription,
    TranslationEnable: translate,
    InformationExtractionEnabled: extract.length > 0,
    SummarizationEnabled: summarise,
    ChapterEnabled: all || req.features.chapters,
  };
  if (translate) params.TranslationParams = { TargetLang: req.features.target_lang };
  if (extract.length > 0) params.InformationExtractionParams = { Types: extract };
  if (summarise) params.SummarizationParams = { Types: ['summary'] };
  return { Input: { Offline: { FileURL: req.file_url, FileType: req.file_type } }, Params: params };
}

/**
 * The recognition 2.0 submit body; `requestId` is also sent as `X-Api-Request-Id`, which names the task.
 * Speakers and utterances are always on (the summary step needs both). Word timings come inside each
 * utterance whenever utterances are on — the API has no separate switch — so `need_word_time_series` is
 * honoured when the result is shaped, not here. Chinese leaves `language` unset: unset recognises Chinese
 * with English and dialects mixed in, and speaker separation is documented for unset or zh-CN only.
 */
export function serviceMinutesSubmitBody(req: ServiceMinutesRequest, requestId: string): BigmodelSubmitBody {
  const audio: BigmodelSubmitBody['audio'] = { url: req.file_url, ...containerOf(req) };
  if (req.source_lang === 'en_us') audio.language = 'en-US';
  const request: BigmodelSubmitBody['request'] = {
    model_name: 'bigmodel',
    enable_itn: true,
    enable_punc: true,
    enable_speaker_info: true,
    show_utterances: true,
  };
  // Recognition 2.0 documents no speaker-count field; speaker_number (the count the minutes product
  // takes as NumberOfSpeaker) is sent only when the caller states one, so a default call is unchanged.
  if (req.number_of_speakers > 0) request.speaker_number = req.number_of_speakers;
  if (req.hot_words.length > 0) request.corpus = { context: JSON.stringify({ hotwords: req.hot_words.map((word) => ({ word })) }) };
  return { user: { uid: requestId }, audio, request };
}

/**
 * `audio.format` is required; the documented values are raw, wav, mp3 and ogg. Other containers go by their
 * suffix, else by the most common one of their file type, and the upstream refuses what it cannot read.
 */
function containerOf(req: ServiceMinutesRequest): { format: string; codec?: 'opus' } {
  const suffix = suffixOf(req.file_url);
  if (suffix === 'opus') return { format: 'ogg', codec: 'opus' };
  if (isOneOf(suffix, AUDIO_SUFFIXES) || isOneOf(suffix, VIDEO_SUFFIXES)) return { format: suffix };
  return { format: req.file_type === 'audio' ? 'mp3' : 'mp4' };
}

/** From the path only: signed URLs carry their query after the file name. */
function inferFileType(fileUrl: string): MinutesFileType | undefined {
  const suffix = suffixOf(fileUrl);
  if (isOneOf(suffix, AUDIO_SUFFIXES)) return 'audio';
  if (isOneOf(suffix, VIDEO_SUFFIXES)) return 'video';
  return undefined;
}

function suffixOf(fileUrl: string): string {
  const name = new URL(fileUrl).pathname.split('/').pop() ?? '';
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot + 1).toLowerCase();
}

function readFeatures(value: unknown, sourceLang: MinutesLang): MinutesFeatures {
  const features = value ?? {};
  if (!isFields(features)) throw invalidRequest('features: must be an object');
  for (const field of Object.keys(features)) {
    if (!FEATURE_FIELDS.has(field)) throw invalidRequest(`features.${field}: unknown field`);
  }
  const flag = (field: string) => {
    const flagValue = given(features, field);
    if (flagValue !== undefined && typeof flagValue !== 'boolean') throw invalidRequest(`features.${field}: must be a boolean`);
    return flagValue;
  };
  // the spec's table garbles the Q&A row; `question_answer` is the upstream's own name for it
  const qa = flag('qa');
  const questionAnswer = flag('question_answer');
  if (qa !== undefined && questionAnswer !== undefined && qa !== questionAnswer) {
    throw invalidRequest('features.question_answer: conflicts with features.qa');
  }
  const targetLang = given(features, 'target_lang');
  if (targetLang !== undefined && !isOneOf(targetLang, MINUTES_LANGS)) throw invalidRequest(`features.target_lang: ${oneOf(MINUTES_LANGS)}`);
  return {
    summary: flag('summary') ?? false,
    chapters: flag('chapters') ?? false,
    todos: flag('todos') ?? false,
    qa: qa ?? questionAnswer ?? false,
    translate: flag('translate') ?? false,
    target_lang: targetLang ?? OTHER_LANG[sourceLang],
  };
}

/**
 * A plain string of words split on commas (ASCII or full-width), `、` or line breaks; or the upstream's own
 * JSON list (`[{"word":"…"}]`, or a list of strings), for callers who already build it. Each upstream gets
 * the words in its own encoding.
 */
function readHotWords(body: Fields): string[] {
  const value = given(body, 'hot_words');
  if (value === undefined) return [];
  if (typeof value !== 'string') throw invalidRequest('hot_words: must be a string');
  let words: string[];
  if (value.trim().startsWith('[')) {
    let list: unknown;
    try {
      list = JSON.parse(value);
    } catch {
      throw invalidRequest('hot_words: starts with "[" but is not a JSON list');
    }
    if (!Array.isArray(list)) throw invalidRequest('hot_words: starts with "[" but is not a JSON list');
    words = list.map((entry) => {
      const word = isFields(entry) ? entry.word : entry;
      if (typeof word !== 'string') throw invalidRequest('hot_words: a JSON list holds strings or {"word": "…"} objects');
      return word;
    });
  } else {
    words = value.split(/[,，、\r\n]+/);
  }
  return [...new Set(words.map((word) => word.trim()).filter((word) => word !== ''))];
}
