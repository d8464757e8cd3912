// The gateway's log destination: lines written in blocks, yet none held back for long, and none
// lost when the process exits.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const DESTINATION = path.resolve(import.meta.dirname, '../../src/cli/log-destination.ts');

/** Runs `body` in a child process with `log`, a pino logger on bufferedStdout(); yields its stdout as it arrives. */
function runLogging(body: string) {
  // Every write to a file descriptor is counted (sonic-boom writes through fs.writeSync), and the
  // count printed on stderr at exit.
  const script = `import fs from 'node:fs'; import { pino } from 'pino'; import { bufferedStdout } from ${JSON.stringify(DESTINATION)};
const writeSync = fs.writeSync;
let writes = 0;
fs.writeSync = (...args) => { writes += 1; return writeSync(...args); };
process.on('exit', () => process.stderr.write('writes=' + writes));
const log = pino({ base: null }, bufferedStdout());
${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const arrivals: { at: number; text: string }[] = [];
  const started = performance.now();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => arrivals.push({ at: performance.now() - started, text }));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const writes = () => Number(/writes=(\d+)/.exec(stderr)?.[1] ?? Number.NaN);
  return { arrivals, exited, all: () => arrivals.map((a) => a.text).join(''), writes };
}

test('a lone line reaches stdout within the flush interval, while the process is still running', async () => {
  const run = runLogging(`log.info('first'); setTimeout(() => { log.info('second'); process.exit(0); }, 1500);`);
  assert.equal(await run.exited, 0);
  const first = run.arrivals.find((a) => a.text.includes('"first"'));
  assert.ok(first, 'the first line arrived');
  assert.ok(!first.text.includes('"second"'), 'the first line came on its own, well before the exit');
  assert.match(run.all(), /"second"/);
});

test('lines written in blocks and those still buffered at exit all arrive, in order, none twice', async () => {
  const run = runLogging(`for (let i = 0; i < 500; i++) log.info({ i }, 'line'); process.exit(0);`);
  assert.equal(await run.exited, 0);
  const numbers = run
    .all()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line).i as number);
  assert.deepEqual(
    numbers,
    Array.from({ length: 500 }, (_, i) => i),
  );
});

test('many lines go out in few writes, each a block of several lines', async () => {
  const run = runLogging(`for (let i = 0; i < 2000; i++) log.info({ i }, 'a line of ordinary length for a request log'); process.exit(0);`);
  assert.equal(await run.exited, 0);
  assert.equal(run.all().trim().split('\n').length, 2000);
  // 2 000 lines of about 80 bytes are some 160 KB: about 40 blocks of 4 KiB, never one write a line.
  const writes = run.writes();
  assert.ok(writes > 0 && writes <= 60, `${writes} writes for 2 000 lines`);
});
