// inspectWav for an upload spooled to disk: the same chunk walk, fed from the file through a
// 64 KiB window, so a file of many tiny chunks costs a few reads, and the samples are never read.
import { open } from 'node:fs/promises';
import { type WavInspection, walkWav } from './wav.js';

const WINDOW_BYTES = 64 * 1024;

export async function inspectWavFile(path: string): Promise<WavInspection> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    let window = { start: 0, bytes: Buffer.alloc(0) };
    const read = async (offset: number, length: number): Promise<Buffer> => {
      const end = Math.min(offset + length, size);
      if (offset < window.start || end > window.start + window.bytes.length) {
        const buffer = Buffer.alloc(Math.min(Math.max(length, WINDOW_BYTES), Math.max(0, size - offset)));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        window = { start: offset, bytes: buffer.subarray(0, bytesRead) };
      }
      return window.bytes.subarray(offset - window.start, end - window.start);
    };
    const walk = walkWav(size);
    let step = walk.next();
    while (!step.done) step = walk.next(await read(step.value.offset, step.value.length));
    return step.value;
  } finally {
    await handle.close();
  }
}
