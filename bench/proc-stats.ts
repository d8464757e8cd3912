// CPU time and memory of a process, read from /proc (Linux). Elsewhere every reader returns null
// and the report says n/a.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User plus system CPU time in a /proc stat file (a process's, or one of its threads'), in ms. */
function statCpuMs(file: string): number | null {
  try {
    const stat = readFileSync(file, 'utf8');
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** User plus system CPU time the process has used so far (all its threads), in ms. */
export const cpuTimeMs = (pid: number) => statCpuMs(`/proc/${pid}/stat`);

/**
 * The same for the process's main thread alone (its thread id is its pid): in Node.js, the event
 * loop, where every request's JavaScript runs; the other threads are V8's and libuv's helpers.
 */
export const mainThreadCpuTimeMs = (pid: number) => statCpuMs(`/proc/${pid}/task/${pid}/stat`);

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

/**
 * A meter of how busy the main thread is, started now: `busy()` is the share of the wall time since
 * that the thread spent on a core (0 to 1). Near 1 under load, the event loop is what limits the
 * process's calls a second, whatever the other core has left.
 */
export function mainThreadBusyMeter(pid: number): { busy(): number | null } {
  const before = mainThreadCpuTimeMs(pid);
  const startedAt = performance.now();
  return {
    busy() {
      const after = mainThreadCpuTimeMs(pid);
      const elapsedMs = performance.now() - startedAt;
      return before === null || after === null || elapsedMs <= 0 ? null : (after - before) / elapsedMs;
    },
  };
}
