// Where the gateway's JSON log lines go: stdout, written on the event loop in blocks of about
// 32 KiB and at least every 100 ms, instead of one write per line handed to libuv's thread pool (a
// thread woken twice per call, which cost more than the line itself). What the process has not
// written when it is killed with SIGKILL, at most one block, is lost; money never rides on a log
// line, and a normal exit writes everything.
//
// The lines of a block are kept apart and joined once, when the block is written: sonic-boom's own
// minLength buffer appends each line to one string and measures its bytes again, which flattens the
// whole block on every line (measured: about 5.6 KB of garbage per call at 4 KiB blocks). The block
// is encoded once, into a buffer kept for it, and written here (writeWholeSync), not by sonic-boom,
// which encoded a string block three times (the write, its byte length, and a copy to cut what was
// written off it). Blocks of 32 KiB: a write of them costs less than two of 4 KiB, and where system
// calls are dear the log's writes were a measurable part of the gateway's CPU (docs/performance.md).
import fs from 'node:fs';
import type { pino } from 'pino';

const BLOCK_CHARS = 32_768;
/** Room for a block of ASCII lines and its last line; a block that does not fit is encoded apart. */
const BLOCK_BYTES = 64 * 1024;
const FLUSH_EVERY_MS = 100;
const STDOUT = 1;

export function bufferedStdout(): pino.DestinationStream {
  let lines: string[] = [];
  let chars = 0;
  const encoded = Buffer.allocUnsafe(BLOCK_BYTES);
  const encoder = new TextEncoder();
  const writeBlock = () => {
    if (lines.length === 0) return;
    const block = lines.join('');
    lines = [];
    chars = 0;
    const { read, written } = encoder.encodeInto(block, encoded);
    writeWholeSync(STDOUT, read === block.length ? encoded.subarray(0, written) : Buffer.from(block));
  };
  const timer = setInterval(writeBlock, FLUSH_EVERY_MS);
  timer.unref();
  process.once('exit', writeBlock);
  return {
    write(line: string) {
      lines.push(line);
      chars += line.length;
      if (chars >= BLOCK_CHARS) writeBlock();
    },
  };
}

// A non-blocking pipe whose reader is behind answers EAGAIN: the block waits until it drains.
const FULL_PIPE_WAIT_MS = 10;
const sleepCell = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number) => Atomics.wait(sleepCell, 0, 0, ms);

let writeFailed = false;

/**
 * Writes all of `bytes` to `fd` from this thread: a short write is continued, a full pipe waited
 * out. Any other error (stdout closed) drops the block, said once on stderr: a log line never
 * takes a call down with it.
 */
export function writeWholeSync(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(fd, bytes, offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EBUSY') {
        sleep(FULL_PIPE_WAIT_MS);
        continue;
      }
      if (!writeFailed) process.stderr.write(`tollroute: writing the log failed (${code ?? String(error)}); log lines are dropped\n`);
      writeFailed = true;
      return;
    }
  }
}
