// test/load-typescript.mjs, which every test process is loaded through: a source changed since its
// transform was kept runs as changed, and its errors point into the TypeScript.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { LOAD_TYPESCRIPT } from '../helpers/processes.js';

const run = promisify(execFile);
// Inside the project, whose package.json makes the scripts ES modules as the sources are (outside
// it, tsx on Node 20 reads a .ts file as CommonJS).
const dir = mkdtempSync(path.join(import.meta.dirname, '.load-typescript-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const runTs = (file: string) => run(process.execPath, ['--import', LOAD_TYPESCRIPT, file]);

test('a TypeScript file imports another by its .js name and runs with its types removed', async () => {
  writeFileSync(path.join(dir, 'greeting.ts'), "export const greeting = (name: string): string => 'hello ' + name;\n");
  const main = path.join(dir, 'imports.ts');
  writeFileSync(main, "import { greeting } from './greeting.js';\ninterface Unused { a: number }\nconsole.log(greeting('world'));\n");
  assert.equal((await runTs(main)).stdout, 'hello world\n');
});

test('a source changed after it ran runs as changed, not from the kept transform', async () => {
  const file = path.join(dir, 'changes.ts');
  writeFileSync(file, 'const answer: number = 1;\nconsole.log(answer);\n');
  assert.equal((await runTs(file)).stdout, '1\n');
  writeFileSync(file, 'const answer: number = 2;\nconsole.log(answer);\n');
  assert.equal((await runTs(file)).stdout, '2\n');
});

test("an error's stack names the TypeScript file and its line", async () => {
  const file = path.join(dir, 'throws.ts');
  writeFileSync(file, "type Never = never;\n\nfunction fail(): Never {\n  throw new Error('here');\n}\nfail();\n");
  const failure = await runTs(file).then(
    () => assert.fail('the script should have thrown'),
    (error: { stderr: string }) => error.stderr,
  );
  assert.match(failure, new RegExp(`at fail \\(${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4:9\\)`));
});
