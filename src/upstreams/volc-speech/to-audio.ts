// The OpenAI-compatible speech answer: audio bytes decoded from the line stream as they arrive.
import { Transform, type TransformCallback } from 'node:stream';
import { forEachLine, LineCutter } from '../ndjson.js';
import { audioOf } from './audio-line.js';

/** OpenAI response_format → the upstream's audio format and our content type. */
export const AUDIO_FORMATS = {
  mp3: { upstream: 'mp3', contentType: 'audio/mpeg' },
  opus: { upstream: 'ogg_opus', contentType: 'audio/ogg' },
  pcm: { upstream: 'pcm', contentType: 'audio/pcm' },
  // The upstream repeats a WAV header per chunk, so PCM is asked for and one header written here.
  wav: { upstream: 'pcm', contentType: 'audio/wav' },
} as const;
export type AudioFormat = keyof typeof AUDIO_FORMATS;

/** A WAV header for a stream of unknown length (sizes at their maximum, as streaming encoders do). */
export function streamingWavHeader(sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(0xffffffff, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(0xffffffff, 40);
  return header;
}

/** JSON's whitespace, which may surround a line (its newline is cut off already). */
const isBlank = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0d;

/** A line's audio: an audio line's read from its bytes, any other line's through a parse of it. */
function lineAudio(bytes: Buffer, start: number, end: number): Buffer | undefined {
  let from = start;
  let to = end;
  while (from < to && isBlank(bytes[from])) from++;
  while (to > from && isBlank(bytes[to - 1])) to--;
  const audio = audioOf(bytes, from, to);
  if (audio) return audio;
  const text = bytes.toString('utf8', start, end).trim();
  if (!text.startsWith('{')) return undefined;
  const data = (JSON.parse(text) as { data?: unknown }).data;
  return typeof data === 'string' && data.length > 0 ? Buffer.from(data, 'base64') : undefined;
}

/**
 * Turns the upstream's JSON lines (read by the meter tap before, which passes them on cut after a
 * newline) into the audio they carry. Bytes, not text: an audio line is read without decoding or
 * parsing it (audio-line.ts).
 */
export function linesToAudio(prefix?: Buffer): Transform {
  const cutter = new LineCutter();
  let prefixSent = false;
  const decodeLines = (chunk: Buffer | undefined): Buffer[] => {
    const lines = cutter.cut(chunk);
    const audio: Buffer[] = [];
    if (!lines) return audio;
    if (prefix && !prefixSent) {
      audio.push(prefix);
      prefixSent = true;
    }
    forEachLine(lines, (start, end) => {
      const piece = lineAudio(lines, start, end);
      if (piece) audio.push(piece);
    });
    return audio;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        callback(null, Buffer.concat(decodeLines(chunk)));
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        callback(null, Buffer.concat(decodeLines(undefined)));
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}
