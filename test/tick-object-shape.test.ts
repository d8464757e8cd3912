// One tick object held for the life of the process keeps V8 building tick objects in compiled code:
// without it, a full collection while no tick object is alive frees the classes of nextTick's object
// literal, and its inline caches turn megamorphic for good (src/tick-object-shape.ts). Each process
// here runs ticks, full collections between turns, and more ticks, then reads the state of
// nextTick's feedback through V8's natives syntax.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tickObjectKept } from '../src/tick-object-shape.js';

const MODULE = new URL('../src/tick-object-shape.ts', import.meta.url).href;
const LOADER = fileURLToPath(new URL('./load-typescript.mjs', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'tick-shape-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The inline-cache states of nextTick's computed keys after ticks and full collections, the module imported first or not. */
function literalCacheStates(keep: boolean): string[] {
  const script = path.join(dir, `probe-${keep ? 'keep' : 'none'}.mjs`);
  writeFileSync(
    script,
    `${keep ? `await import(${JSON.stringify(MODULE)});` : ''}
for (let round = 0; round < 6; round++) {
  for (let i = 0; i < 3000; i++) process.nextTick(() => {}, i);
  await new Promise(setImmediate);
  globalThis.gc();
  await new Promise(setImmediate);
}
%DebugPrint(process.nextTick);
`,
  );
  const out = execFileSync(process.execPath, ['--expose-gc', '--allow-natives-syntax', '--import', LOADER, script], { encoding: 'utf8' });
  return [...out.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]!);
}

test('importing the module holds a tick object', () => {
  assert.equal(tickObjectKept(), true);
});

test("with a tick object held, full collections between turns leave nextTick's object literal monomorphic", (t) => {
  const without = literalCacheStates(false);
  if (without.length === 0) return t.skip("this Node.js does not print nextTick's feedback");
  if (!without.includes('MEGAMORPHIC')) return t.skip("this Node.js keeps nextTick's classes through full collections by itself");
  const held = literalCacheStates(true);
  assert.ok(held.length > 0);
  assert.deepEqual(
    held.filter((state) => state !== 'MONOMORPHIC'),
    [],
  );
});
