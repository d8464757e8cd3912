// The summary printed at the end of `npm test`: the counts of the run and the failed tests by name.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPORTER = fileURLToPath(new URL('./summary-reporter.mjs', import.meta.url));

/** Runs node's test runner on fixture files (one, or several by name) with the summary reporter alone. */
function runFixture(source: string | Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-summary-'));
  const files = typeof source === 'string' ? { 'fixture.test.mjs': source } : source;
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  // Without the runner's own marker, which would make the child report to this process instead.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--test', `--test-reporter=${REPORTER}`, ...Object.keys(files)], { cwd: dir, env }, (_error, stdout) =>
      resolve({ code: child.exitCode, stdout }),
    );
  });
}

test('the summary counts passed, failed, skipped and todo tests, not the suites around them', async () => {
  const { stdout } = await runFixture(`
    import { describe, test } from 'node:test';
    describe('a suite', () => {
      test('passes', () => {});
      test('fails', () => { throw new Error('no'); });
    });
    test('is skipped', { skip: 'not here' }, () => {});
    test('is to do', { todo: true }, () => {});
  `);
  assert.match(stdout, /── summary: tests 4 · passed 1 · failed 1 · skipped 1 · todo 1 · files 1 · \d+s/);
});

test('the failed tests are named last, with their file and suite', async () => {
  const { stdout, code } = await runFixture(`
    import { describe, test } from 'node:test';
    describe('billing', () => {
      test('settles once', () => { throw new Error('twice'); });
    });
  `);
  assert.equal(code, 1, 'the run still fails');
  assert.ok(stdout.trimEnd().endsWith('✖ fixture.test.mjs › billing › settles once'), stdout);
});

test('a run with no failure lists none', async () => {
  const { stdout, code } = await runFixture(`import { test } from 'node:test'; test('passes', () => {});`);
  assert.equal(code, 0);
  assert.match(stdout, /tests 1 · passed 1 · failed 0/);
  assert.doesNotMatch(stdout, /failed:/);
});

test('the slowest files are listed, the slowest first', async () => {
  const { stdout } = await runFixture({
    'quick.test.mjs': `import { test } from 'node:test'; test('is quick', () => {});`,
    'slow.test.mjs': `import { test } from 'node:test'; test('waits', () => new Promise((resolve) => setTimeout(resolve, 1200)));`,
  });
  assert.match(stdout, /slowest files:\n\s+1s {2}slow\.test\.mjs\n\s+0s {2}quick\.test\.mjs\n/);
});
