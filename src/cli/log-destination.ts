// Where the gateway's JSON log lines go: stdout, written on the event loop in blocks of about
// 4 KiB and at least every 100 ms, instead of one write per line handed to libuv's thread pool (a
// thread woken twice per call, which cost more than the line itself). What the process has not
// written when it is killed with SIGKILL, at most one block, is lost; money never rides on a log
// line, and a normal exit writes everything.
//
// The lines of a block are kept apart and joined once, when the block is written: sonic-boom's own
// minLength buffer appends each line to one string and measures its bytes again, which flattens the
// whole block on every line (measured: about 5.6 KB of garbage per call at 4 KiB blocks).
import { pino } from 'pino';

const BLOCK_CHARS = 4096;
const FLUSH_EVERY_MS = 100;

export function bufferedStdout(): pino.DestinationStream {
  // sync: a block is written at once by this thread (sonic-boom retries a pipe that is full).
  const stdout = pino.destination({ dest: 1, sync: true });
  let lines: string[] = [];
  let chars = 0;
  const writeBlock = () => {
    if (lines.length === 0) return;
    const block = lines.join('');
    lines = [];
    chars = 0;
    stdout.write(block);
  };
  const timer = setInterval(writeBlock, FLUSH_EVERY_MS);
  timer.unref();
  process.once('exit', () => {
    writeBlock();
    stdout.flushSync();
  });
  return {
    write(line: string) {
      lines.push(line);
      chars += line.length;
      if (chars >= BLOCK_CHARS) writeBlock();
    },
  };
}
