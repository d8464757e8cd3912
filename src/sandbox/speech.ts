import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { mapChunks, midStreamErrorMessage } from './reply.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { hashOf, isRecord } from './text.js';

// Volcengine speech synthesis, V3 HTTP chunked unidirectional (volcengine-formats.md §1): newline-delimited
// JSON objects, audio per sentence, optional subtitles, and the final `code 20000000` object.

/** openspeech's codes: the final frame, bad parameters, refused access, server error. */
export const SPEECH_CODES = { ok: 20_000_000, invalidParams: 45_000_001, denied: 45_000_000, server: 55_000_000 } as const;

/** The body an openspeech product answers an error with (AST refuses its upgrades with it too). */
export function speechErrorForStatus(status: number, message: string): { code: number; message: string } {
  const code = status >= 500 ? SPEECH_CODES.server : status === 400 ? SPEECH_CODES.invalidParams : SPEECH_CODES.denied;
  return { code, message };
}

/** A subtitle clock: every code point of `req_params.text` (spaces and punctuation too) lasts this long. */
export const SECONDS_PER_CHARACTER = 0.2;
const WORD_CONFIDENCE = 0.9;
/** Audio per sentence: a base plus so much per code point, sent in objects of at most AUDIO_CHUNK_BYTES. */
const AUDIO_BASE_BYTES = 160;
const AUDIO_BYTES_PER_CHARACTER = 24;
const AUDIO_CHUNK_BYTES = 512;
const FORMATS = ['mp3', 'ogg_opus', 'pcm', 'wav'];
const SAMPLE_RATES = [8000, 16000, 22050, 24000, 32000, 44100, 48000];
/** An empty ID3v2.4 tag, so an mp3 answer looks like one from its first bytes. */
const ID3_HEADER = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]);
/** MPEG-2 layer III frame sync, placed at the start of each sentence's mp3 bytes. */
const MP3_FRAME_SYNC = Buffer.from([0xff, 0xf3]);

const SENTENCE_END = /[。！？.!?]/u;
const HAN = /\p{Script=Han}/u;
const NOT_WORD = /[\s\p{P}\p{S}]/u;

interface SpeechRequest {
  text: string;
  speaker: string;
  format: string;
  subtitles: boolean;
}

interface Word {
  word: string;
  startTime: number;
  endTime: number;
  confidence: number;
}

export const speechRoute: SandboxRoute = {
  kind: 'speech',
  method: 'POST',
  path: '/api/v3/tts/unidirectional',
  errorBody: speechErrorForStatus,
  handle: answerSpeech,
};

async function answerSpeech(ctx: SandboxContext): Promise<void> {
  const refusal = missingCredentials(ctx.headers);
  if (refusal) return ctx.reply.json(401, speechErrorForStatus(401, refusal));
  const request = parseSpeechRequest(ctx.body);
  if (typeof request === 'string') return ctx.reply.json(400, speechErrorForStatus(400, request));
  const withUsage = ctx.headers['x-control-require-usage-tokens-return'] !== undefined;

  // no content-length: Node sends it chunked, each object as it is made
  await ctx.reply.stream({
    headers: { 'content-type': 'application/json', 'x-tt-logid': hashOf(ctx.body) },
    chunks: mapChunks(speechObjects(request, withUsage), jsonLine),
    // a server error code in place of the final 20000000 (volcengine-formats.md §1: any code but 0 and 20000000)
    errorChunk: (sent) => jsonLine({ code: SPEECH_CODES.server, message: midStreamErrorMessage(sent), data: null }),
  });
}

const jsonLine = (object: unknown) => `${JSON.stringify(object)}\n`;

/** Why the credentials are refused, or '' when they are enough: the new console's key, or the old app id and token. */
function missingCredentials(headers: IncomingHttpHeaders): string {
  if (!headerValue(headers, 'x-api-resource-id')) return 'X-Api-Resource-Id: header is required';
  if (headerValue(headers, 'x-api-key')) return '';
  if (headerValue(headers, 'x-api-app-id') && headerValue(headers, 'x-api-access-key')) return '';
  return 'send X-Api-Key, or X-Api-App-Id with X-Api-Access-Key';
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  return typeof value === 'string' ? value.trim() : '';
}

function parseSpeechRequest(body: unknown): SpeechRequest | string {
  if (!isRecord(body)) return 'body: expected a JSON object';
  const params = body.req_params;
  if (!isRecord(params)) return 'req_params: required, an object';
  const { text, speaker, audio_params: audio = {}, additions } = params;
  if (typeof text !== 'string' || text === '') return 'req_params.text: required, a non-empty string';
  if (typeof speaker !== 'string' || speaker === '') return 'req_params.speaker: required, a non-empty string';
  if (!isRecord(audio)) return 'req_params.audio_params: expected an object';
  const { format = 'mp3', sample_rate: rate, enable_subtitle: subtitles = false } = audio;
  if (typeof format !== 'string' || !FORMATS.includes(format)) return `req_params.audio_params.format: expected one of ${FORMATS.join(', ')}`;
  if (rate !== undefined && !SAMPLE_RATES.includes(rate as number)) {
    return `req_params.audio_params.sample_rate: expected one of ${SAMPLE_RATES.join(', ')}`;
  }
  if (typeof subtitles !== 'boolean') return 'req_params.audio_params.enable_subtitle: expected a boolean';
  const badAdditions = checkAdditions(additions);
  if (badAdditions) return badAdditions;
  return { text, speaker, format, subtitles };
}

/** `additions` is a JSON-encoded object on the wire; an object is accepted too. Its `context_texts` are never spoken or billed. */
function checkAdditions(additions: unknown): string {
  if (additions === undefined || additions === null) return '';
  let parsed = additions;
  if (typeof additions === 'string') {
    try {
      parsed = JSON.parse(additions);
    } catch {
      return 'req_params.additions: expected a JSON-encoded object';
    }
  }
  if (!isRecord(parsed)) return 'req_params.additions: expected a JSON object';
  const contexts = parsed.context_texts;
  if (contexts !== undefined && !(Array.isArray(contexts) && contexts.every((c) => typeof c === 'string'))) {
    return 'req_params.additions.context_texts: expected an array of strings';
  }
  return '';
}

/** The answer's objects, made one at a time: per sentence its audio then (with subtitles) its words, then the end. */
function* speechObjects(request: SpeechRequest, withUsage: boolean) {
  const characters = [...request.text];
  for (const [index, sentence] of splitSentences(characters).entries()) {
    const text = characters.slice(sentence.start, sentence.end).join('');
    let audio = sentenceAudio(request, text);
    if (index === 0 && request.format === 'mp3') audio = Buffer.concat([ID3_HEADER, audio]);
    for (let at = 0; at < audio.length; at += AUDIO_CHUNK_BYTES) {
      yield { code: 0, message: '', data: audio.subarray(at, at + AUDIO_CHUNK_BYTES).toString('base64') };
    }
    if (request.subtitles) yield { code: 0, message: '', data: null, sentence: { text, words: sentenceWords(characters, sentence) } };
  }
  const end = { code: SPEECH_CODES.ok, message: 'ok', data: null };
  // as Volcengine does: usage only when the request asked for it by header
  yield withUsage ? { ...end, usage: { text_words: characters.length } } : end;
}

interface Span {
  /** Code point offsets in the whole text, end exclusive. */
  start: number;
  end: number;
}

/** Sentences end after a run of 。！？.!? (kept); surrounding whitespace is trimmed and blank sentences dropped. */
export function splitSentences(characters: readonly string[]): Span[] {
  const spans: Span[] = [];
  let start = 0;
  for (let i = 0; i < characters.length; i++) {
    const ends = SENTENCE_END.test(characters[i] as string) && !SENTENCE_END.test(characters[i + 1] ?? '');
    if (ends || i === characters.length - 1) {
      const span = trimSpan(characters, start, i + 1);
      if (span.end > span.start) spans.push(span);
      start = i + 1;
    }
  }
  return spans;
}

function trimSpan(characters: readonly string[], start: number, end: number): Span {
  while (start < end && /\s/u.test(characters[start] as string)) start++;
  while (end > start && /\s/u.test(characters[end - 1] as string)) end--;
  return { start, end };
}

/** Words: each Han character alone, else runs of letters and digits; punctuation takes time but is no word. */
function sentenceWords(characters: readonly string[], { start, end }: Span): Word[] {
  const spans: Span[] = [];
  for (let i = start; i < end; i++) {
    const c = characters[i] as string;
    if (NOT_WORD.test(c)) continue;
    const last = spans.at(-1);
    const joins = last !== undefined && last.end === i && !HAN.test(c) && !HAN.test(characters[i - 1] as string);
    if (joins) last.end = i + 1;
    else spans.push({ start: i, end: i + 1 });
  }
  return spans.map((span) => ({
    word: characters.slice(span.start, span.end).join(''),
    startTime: seconds(span.start),
    endTime: seconds(span.end),
    confidence: WORD_CONFIDENCE,
  }));
}

/** Rounded to the millisecond, so 3 × 0.2 is 0.6 and not 0.6000000000000001. */
const seconds = (characterOffset: number) => Math.round(characterOffset * SECONDS_PER_CHARACTER * 1000) / 1000;

function sentenceAudio({ speaker, format }: SpeechRequest, text: string): Buffer {
  const length = AUDIO_BASE_BYTES + AUDIO_BYTES_PER_CHARACTER * [...text].length;
  const bytes = seededBytes(`${speaker}\n${format}\n${text}`, length);
  if (format === 'mp3') MP3_FRAME_SYNC.copy(bytes);
  return bytes;
}

/** `length` bytes that depend only on `seed`: SHA-256 in counter mode, for audio that tests can reproduce. */
export function seededBytes(seed: string, length: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; i * 32 < length; i++) blocks.push(createHash('sha256').update(`${seed}#${i}`).digest());
  return Buffer.concat(blocks).subarray(0, length);
}
