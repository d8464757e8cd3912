import { loadMediaLibrary } from '../media/media-library.js';
import { azureRoute } from './azure.js';
import { hasBearer, openAiError, openAiErrorForStatus, readMultipartForm, refuseInvalid, UNAUTHORIZED } from './openai-common.js';
import { mapChunks, midStreamErrorMessage, SSE_HEADERS, sseData } from './reply.js';
import type { SandboxContext, SandboxRoute } from './route.js';

// OpenAI audio transcriptions: a multipart form of one recording, answered with a transcript that
// is a function of the audio's length ("transcribed speech of 1500 ms") in every response_format,
// or streamed as transcript.text.delta events (a word each) then transcript.text.done. Usage is
// whisper-1's, `{type: "duration", seconds}` (verbose_json: its `duration` alone), except for a
// model named like gpt-4o-transcribe, which reports tokens as that model does.

export const transcriptionsRoute: SandboxRoute = {
  kind: 'transcriptions',
  method: 'POST',
  path: '/v1/audio/transcriptions',
  errorBody: openAiErrorForStatus,
  handle: answerTranscription,
};

/** Azure OpenAI's deployment path (the deployment names the model) and its v1 path; fault kind `azure`. */
export const azureTranscriptionsRoutes: SandboxRoute[] = [
  azureRoute(transcriptionsRoute, '/openai/deployments/:deployment/audio/transcriptions'),
  azureRoute(transcriptionsRoute, '/openai/v1/audio/transcriptions'),
];

const FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'];
const NOT_AUDIO = "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']";
/** Input tokens a second of audio counts for, for the models that report tokens. */
const TOKENS_PER_SECOND = 17;

/** A WAV's length from its `fmt ` byte rate and `data` size; other formats by their header. */
export async function audioMs(bytes: Buffer): Promise<number | undefined> {
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WAVE') {
    let byteRate = 0;
    for (let at = 12; at + 8 <= bytes.length; ) {
      const id = bytes.subarray(at, at + 4).toString('latin1');
      const size = bytes.readUInt32LE(at + 4);
      if (id === 'fmt ' && at + 16 <= bytes.length) byteRate = bytes.readUInt32LE(at + 16);
      if (id === 'data') return byteRate > 0 ? Math.round((Math.min(size, bytes.length - at - 8) * 1000) / byteRate) : undefined;
      at += 8 + size + (size % 2);
    }
    return undefined;
  }
  try {
    const { parseBuffer } = await loadMediaLibrary();
    const seconds = (await parseBuffer(bytes, undefined, { duration: true, skipCovers: true })).format.duration;
    return seconds && Number.isFinite(seconds) ? Math.round(seconds * 1000) : undefined;
  } catch {
    return undefined;
  }
}

async function answerTranscription(ctx: SandboxContext): Promise<void> {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const form = await readMultipartForm(ctx);
  if (!form) return refuseInvalid(ctx, 'body: expected multipart/form-data');
  const text = (name: string) => {
    const value = form.get(name);
    return typeof value === 'string' ? value : undefined;
  };
  const model = ctx.params.deployment ?? text('model');
  if (!model) return refuseInvalid(ctx, 'model: required');
  const file = form.get('file');
  if (file === null || typeof file === 'string') return refuseInvalid(ctx, 'file: required, an audio file');
  const ms = await audioMs(Buffer.from(await file.arrayBuffer()));
  if (ms === undefined) return refuseInvalid(ctx, NOT_AUDIO);
  const format = text('response_format') ?? 'json';
  if (!FORMATS.includes(format)) return refuseInvalid(ctx, `response_format: must be one of ${FORMATS.join(', ')}`);
  const granularities = form.getAll('timestamp_granularities[]').map(String);
  const transcript = `transcribed speech of ${ms} ms`;
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  const words = transcript.split(' ');
  const usage = /gpt-4o/.test(model)
    ? { type: 'tokens', input_tokens: seconds * TOKENS_PER_SECOND, output_tokens: words.length, total_tokens: seconds * TOKENS_PER_SECOND + words.length }
    : { type: 'duration', seconds };

  if (text('stream') === 'true') {
    const deltas = words.map((word, i) => ({ type: 'transcript.text.delta', delta: i === 0 ? word : ` ${word}` }));
    await ctx.reply.stream({
      headers: SSE_HEADERS,
      chunks: mapChunks([...deltas, { type: 'transcript.text.done', text: transcript, usage }], sseData),
      errorChunk: (sent) => sseData({ type: 'error', ...openAiError(midStreamErrorMessage(sent), 'server_error') }),
    });
    return;
  }
  const plain = (body: string) => ctx.reply.send(200, body, { 'content-type': 'text/plain; charset=utf-8' });
  if (format === 'text') return plain(`${transcript}\n`);
  if (format === 'srt') return plain(`1\n${clock(0, ',')} --> ${clock(ms, ',')}\n${transcript}\n\n`);
  if (format === 'vtt') return plain(`WEBVTT\n\n${clock(0, '.')} --> ${clock(ms, '.')}\n${transcript}\n\n`);
  if (format === 'json') return ctx.reply.json(200, { text: transcript, usage });
  const perWord = ms / 1000 / words.length;
  ctx.reply.json(200, {
    task: 'transcribe',
    language: text('language') ?? 'english',
    duration: ms / 1000,
    text: transcript,
    ...((granularities.length === 0 || granularities.includes('segment')) && {
      segments: [
        { id: 0, seek: 0, start: 0, end: ms / 1000, text: transcript, tokens: [], temperature: 0, avg_logprob: -0.1, compression_ratio: 1, no_speech_prob: 0 },
      ],
    }),
    ...(granularities.includes('word') && {
      words: words.map((word, i) => ({ word, start: round(i * perWord), end: round((i + 1) * perWord) })),
    }),
  });
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** A cue time, `00:00:01,500` (srt) or `00:00:01.500` (vtt). */
function clock(ms: number, separator: string): string {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1000);
  return `${pad(hours)}:${pad(minutes)}:${pad(seconds)}${separator}${pad(ms % 1000, 3)}`;
}
