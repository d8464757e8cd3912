// The OpenAI-compatible speech answer: audio bytes decoded from the line stream as they arrive.
import { Transform, type TransformCallback } from 'node:stream';

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

/** Turns the upstream's JSON lines (read by the meter tap before) into the audio they carry. */
export function linesToAudio(prefix?: Buffer): Transform {
  let pending = '';
  let prefixSent = false;
  const decodeLines = (text: string, final: boolean): Buffer[] => {
    pending += text;
    const end = final ? pending.length : pending.lastIndexOf('\n') + 1;
    const complete = pending.slice(0, end);
    pending = pending.slice(end);
    const audio: Buffer[] = [];
    if (prefix && !prefixSent && complete.length > 0) {
      audio.push(prefix);
      prefixSent = true;
    }
    for (const line of complete.split('\n')) {
      const trimmed = line.trim();
      if (!trimmed.startsWith('{')) continue;
      const data = (JSON.parse(trimmed) as { data?: unknown }).data;
      if (typeof data === 'string' && data.length > 0) audio.push(Buffer.from(data, 'base64'));
    }
    return audio;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        callback(null, Buffer.concat(decodeLines(chunk.toString('utf8'), false)));
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        callback(null, Buffer.concat(decodeLines('', true)));
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}
