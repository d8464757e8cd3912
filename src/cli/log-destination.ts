// Where the gateway's JSON log lines go: stdout, written on the event loop in blocks of about
// 4 KiB and at least every 100 ms, instead of one write per line handed to libuv's thread pool (a
// thread woken twice per call, which cost more than the line itself). What the process has not
// written when it is killed with SIGKILL, at most one block, is lost; money never rides on a log
// line, and a normal exit writes everything.
import { pino } from 'pino';

const BLOCK_BYTES = 4096;
const FLUSH_EVERY_MS = 100;

export function bufferedStdout(): pino.DestinationStream {
  // sync: a full block is written at once by this thread (sonic-boom retries a pipe that is full).
  const stdout = pino.destination({ dest: 1, sync: true, minLength: BLOCK_BYTES });
  let unwritten = false;
  const timer = setInterval(() => {
    if (!unwritten) return;
    unwritten = false;
    stdout.flush();
  }, FLUSH_EVERY_MS);
  timer.unref();
  process.once('exit', () => stdout.flushSync());
  return {
    write(line: string) {
      unwritten = true;
      stdout.write(line);
    },
  };
}
