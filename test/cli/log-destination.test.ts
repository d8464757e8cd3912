// The gateway's log destination: lines written in blocks, yet none held back for long, and none
// lost when the process exits.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const DESTINATION = path.resolve(import.meta.dirname, '../../src/cli/log-destination.ts');

/** Runs `body` in a child process with `log`, a pino logger on bufferedStdout(); yields its stdout as it arrives. */
function runLogging(body: string) {
  const script = `import { pino } from 'pino'; import { bufferedStdout } from ${JSON.stringify(DESTINATION)};
const log = pino({ base: null }, bufferedStdout());
${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const arrivals: { at: number; text: string }[] = [];
  const started = performance.now();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => arrivals.push({ at: performance.now() - started, text }));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { arrivals, exited, all: () => arrivals.map((a) => a.text).join('') };
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
