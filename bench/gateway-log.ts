// What the gateway's log says went wrong lately: wrk counts failed answers but not why, so a
// failed warm-up names the gateway's own error lines.
import { closeSync, openSync, readSync, statSync } from 'node:fs';

const TAIL_BYTES = 256 * 1024;
const PINO_ERROR_LEVEL = 50;

/** The last `max` lines at level error or above, shortened; none when the log cannot be read. */
export function recentGatewayErrors(logFile: string, max = 5): string[] {
  let text: string;
  try {
    const size = statSync(logFile).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    const fd = openSync(logFile, 'r');
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    text = buffer.toString('utf8');
  } catch {
    return [];
  }
  const errors = text.split('\n').filter((line) => {
    const level = /"level":(\d+)/.exec(line)?.[1];
    return level !== undefined && Number(level) >= PINO_ERROR_LEVEL;
  });
  return errors.slice(-max).map((line) => (line.length > 600 ? `${line.slice(0, 600)}…` : line));
}
