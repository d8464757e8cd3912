import type { SandboxContext, SandboxRoute } from './route.js';
import { durationFromUrl } from './tasks.js';

// Recordings of a known length, for the minutes products: `GET /__audio/<name>.wav?duration_s=<N>` is
// a WAV whose header states N seconds (60 when absent), the length the minutes upstreams report for
// the same URL. The sample rate is low so that even a recording past two hours is a few megabytes,
// and a `Range: bytes=<a>-<b>` request is answered with just those bytes (206), as file hosts do.

export const AUDIO_PREFIX = '/__audio/';
const DEFAULT_SECONDS = 60;
const SAMPLE_RATE = 1000;
const HEADER_BYTES = 44;
const RANGE = /^bytes=(\d+)-(\d*)$/;

export const audioRoute: SandboxRoute = {
  kind: 'media',
  method: 'GET',
  path: `${AUDIO_PREFIX}:name`,
  handle: answerAudio,
};

function answerAudio(ctx: SandboxContext): void {
  const seconds = durationFromUrl(`${ctx.path}?${ctx.query}`, DEFAULT_SECONDS);
  if (typeof seconds === 'string') return ctx.reply.send(400, seconds, { 'content-type': 'text/plain' });
  const size = HEADER_BYTES + Math.round(seconds * SAMPLE_RATE);
  const range = RANGE.exec(String(ctx.headers.range ?? ''));
  const headers = { 'content-type': 'audio/wav', 'accept-ranges': 'bytes' };
  if (!range) return ctx.reply.send(200, wavBytes(size, 0, size), headers);
  const start = Number(range[1]);
  const end = Math.min(size - 1, range[2] === '' ? size - 1 : Number(range[2]));
  if (start >= size || end < start) return ctx.reply.send(416, '', { 'content-range': `bytes */${size}` });
  ctx.reply.send(206, wavBytes(size, start, end + 1), { ...headers, 'content-range': `bytes ${start}-${end}/${size}` });
}

/** Bytes [from, to) of an 8-bit mono WAV `size` bytes long; the samples are a quiet square wave. */
function wavBytes(size: number, from: number, to: number): Buffer {
  const dataBytes = size - HEADER_BYTES;
  const header = Buffer.alloc(HEADER_BYTES);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(size - 8, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE, 28); // bytes a second
  header.writeUInt16LE(1, 32); // bytes a sample
  header.writeUInt16LE(8, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  const bytes = Buffer.alloc(to - from);
  for (let at = from; at < to; at++) bytes[at - from] = at < HEADER_BYTES ? (header[at] as number) : at % 20 < 10 ? 0x84 : 0x7c;
  return bytes;
}
