// CPU time and memory of a process, read from /proc (Linux). Elsewhere every reader returns null
// and the report says n/a.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User plus system CPU time the process has used so far (all its threads), in ms. */
export function cpuTimeMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Resident memory now, in bytes. */
export const rssBytes = (pid: number) => statusKb(pid, 'VmRSS');

/** The most resident memory since the process started, or since `resetPeakRss`. */
export const peakRssBytes = (pid: number) => statusKb(pid, 'VmHWM');

/**
 * Makes VmHWM start again from the current RSS, so the peak read after a run is that run's own
 * (the processes live through every scenario). Returns false where the kernel does not allow it,
 * and the peak is then the process's lifetime peak.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** A CPU counter started now: `perRequest(n)` is the CPU ms used since, divided by n. */
export function cpuMeter(pid: number): { perRequest(requests: number): number | null } {
  const before = cpuTimeMs(pid);
  return {
    perRequest(requests) {
      const after = cpuTimeMs(pid);
      return before === null || after === null || requests <= 0 ? null : (after - before) / requests;
    },
  };
}
