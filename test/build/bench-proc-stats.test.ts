// The bench reads a target's main thread apart from its whole process: under load, a main thread
// busy near all of the wall time is an event loop that limits the calls a second, whatever CPU
// the process's other threads (V8's, libuv's) use beside it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { cpuTimeMs, mainThreadBusyMeter, mainThreadCpuTimeMs } from '../../bench/proc-stats.js';

const linux = existsSync(`/proc/${process.pid}/task/${process.pid}/stat`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Spins this thread until the process has used `ms` more CPU (bounded in wall time). */
function spinFor(ms: number) {
  const start = process.cpuUsage();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms || Date.now() > deadline) return;
  }
}

test('work on another thread counts in the process CPU, not in the main thread CPU', { skip: !linux && 'no /proc' }, async () => {
  const pid = process.pid;
  const processBefore = cpuTimeMs(pid)!;
  const mainBefore = mainThreadCpuTimeMs(pid)!;
  // The worker spins for 600 ms of wall time while this thread sleeps.
  const worker = new Worker('const end = Date.now() + 600; while (Date.now() < end);', { eval: true });
  await new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject));
  const processUsed = cpuTimeMs(pid)! - processBefore;
  const mainUsed = mainThreadCpuTimeMs(pid)! - mainBefore;
  assert.ok(processUsed >= 150, `the process used ${processUsed} ms while its worker spun`);
  assert.ok(mainUsed < processUsed / 2, `the main thread used ${mainUsed} ms of the process's ${processUsed}`);
});

test('a main thread that spins reads as busy, and one that sleeps as idle', { skip: !linux && 'no /proc' }, async () => {
  const spinning = mainThreadBusyMeter(process.pid);
  spinFor(300);
  const busy = spinning.busy()!;
  const sleeping = mainThreadBusyMeter(process.pid);
  await sleep(400);
  const idle = sleeping.busy()!;
  assert.ok(busy > 0.3, `busy ${busy} while spinning`);
  assert.ok(idle < 0.25, `busy ${idle} while asleep`);
});

test('a process that does not exist reads as null, not as zero', () => {
  const gone = 2 ** 22 + 12_345; // above the kernel's largest pid
  assert.equal(mainThreadCpuTimeMs(gone), null);
  assert.equal(mainThreadBusyMeter(gone).busy(), null);
});
