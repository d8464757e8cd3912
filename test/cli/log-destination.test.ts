// The gateway's log destination: lines written in blocks, yet none held back for long, and none
// lost when the process exits.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { LOAD_TYPESCRIPT } from '../helpers/processes.js';

const DESTINATION = path.resolve(import.meta.dirname, '../../src/cli/log-destination.ts');

/**
 * Runs `body` in a child process with `log`, a pino logger on bufferedStdout(); yields its stdout as
 * it arrives. `write`, when given, stands in for the file write: `(fd, bytes, offset, n)` where `n`
 * is the number of the write and `writeSync` the real one.
 */
function runLogging(body: string, write = '(fd, bytes, offset) => writeSync(fd, bytes, offset)') {
  // Every write to a file descriptor is counted (sonic-boom writes through fs.writeSync), and the
  // count printed on stderr at exit.
  const script = `import fs from 'node:fs'; import { pino } from 'pino'; import { bufferedStdout } from ${JSON.stringify(DESTINATION)};
const writeSync = fs.writeSync;
let writes = 0;
const write = ${write};
fs.writeSync = (fd, bytes, offset) => { writes += 1; return write(fd, bytes, offset, writes); };
process.on('exit', () => process.stderr.write('writes=' + writes));
const log = pino({ base: null }, bufferedStdout());
${body}`;
  const child = spawn(process.execPath, ['--import', LOAD_TYPESCRIPT, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const arrivals: { at: number; text: string }[] = [];
  const started = performance.now();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => arrivals.push({ at: performance.now() - started, text }));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const writes = () => Number(/writes=(\d+)/.exec(stderr)?.[1] ?? Number.NaN);
  return { arrivals, exited, all: () => arrivals.map((a) => a.text).join(''), writes, stderr: () => stderr };
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
  // 2 000 lines of about 80 bytes are some 160 KB: about 5 blocks of 32 KiB, never one write a line.
  const writes = run.writes();
  assert.ok(writes > 0 && writes <= 10, `${writes} writes for 2 000 lines`);
});

/** The numbers of the lines that `run` wrote, as they arrived. */
const lineNumbers = (run: ReturnType<typeof runLogging>) =>
  run
    .all()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line).i as number);
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

test('a block that goes out in short writes arrives whole, each write continuing where the last stopped', async () => {
  // At most 7 bytes a write: every line is cut, most characters land in a write of their own.
  // 1 000 lines of about 45 bytes: a block of 32 KiB fills while they are logged.
  const run = runLogging(
    `for (let i = 0; i < 1000; i++) log.info({ i }, 'line é ✓'); process.exit(0);`,
    '(fd, bytes, offset) => writeSync(fd, bytes, offset, Math.min(7, bytes.length - offset))',
  );
  assert.equal(await run.exited, 0);
  assert.deepEqual(lineNumbers(run), upTo(1000));
  assert.match(run.all(), /"msg":"line é ✓"/);
  assert.ok(run.writes() > 200, `${run.writes()} writes`);
});

test('a full pipe (EAGAIN) is waited out: the block is written again and nothing is lost', async () => {
  const eagainFirst = `(fd, bytes, offset, n) => {
    if (n <= 3) throw Object.assign(new Error('resource temporarily unavailable'), { code: 'EAGAIN' });
    return writeSync(fd, bytes, offset);
  }`;
  const run = runLogging(`for (let i = 0; i < 300; i++) log.info({ i }, 'line'); process.exit(0);`, eagainFirst);
  assert.equal(await run.exited, 0);
  assert.deepEqual(lineNumbers(run), upTo(300));
  assert.doesNotMatch(run.stderr(), /writing the log failed/);
});

test('a stdout that fails for good drops its lines without stopping the process, and says so once on stderr', async () => {
  const closed = `() => { throw Object.assign(new Error('broken pipe'), { code: 'EPIPE' }); }`;
  // 1 500 lines of about 30 bytes: a block of 32 KiB fails while they are logged, and the timer's later.
  const run = runLogging(`for (let i = 0; i < 1500; i++) log.info({ i }, 'line'); setTimeout(() => { log.info('later'); process.exit(0); }, 300);`, closed);
  assert.equal(await run.exited, 0);
  assert.equal(run.all(), '');
  assert.equal(run.stderr().match(/writing the log failed \(EPIPE\)/g)?.length, 1, run.stderr());
  assert.ok(run.writes() >= 2, 'later blocks were still tried');
});

test('a block whose text takes more bytes than the block buffer holds arrives whole', async () => {
  // 17 lines of 2 000 checkmarks fill a block of 32 768 characters: some 100 KB of UTF-8.
  const run = runLogging(`const text = '✓'.repeat(2000); for (let i = 0; i < 40; i++) log.info({ i, text }, 'wide'); process.exit(0);`);
  assert.equal(await run.exited, 0);
  assert.deepEqual(lineNumbers(run), upTo(40));
  assert.ok(run.all().includes(`"text":"${'✓'.repeat(2000)}"`));
  assert.ok(run.writes() >= 2, `${run.writes()} writes`);
});
