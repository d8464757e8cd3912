// The fault matrix: every endpoint family and task kind × every upstream fault ×
// a caller that waits or leaves. Each cell checks the documented answer (DESIGN §5), that the hold
// ended exactly once with the documented amount (DESIGN §3), and that the gateway is still healthy.
// The families and faults are in fault-matrix/; the cells run in shard processes, each on a few
// gateways (a gateway, its sandbox and its SQLite store per worker), and their results come back here.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { test } from 'node:test';
import { type CellResult, failureList, matrixTable, planCells } from './fault-matrix/runner.js';

const SHARDS = 2;
const GATEWAYS_PER_SHARD = 8;

function runShard(shard: number): Promise<CellResult[]> {
  return new Promise((resolve, reject) => {
    // a plain process, not a test file of the runner's
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const child = fork(new URL('./fault-matrix/shard.ts', import.meta.url), [String(shard), String(SHARDS), String(GATEWAYS_PER_SHARD)], {
      env,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    let results: CellResult[] | undefined;
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.on('message', (message) => (results = message as CellResult[]));
    child.once('error', reject);
    child.once('exit', (code) =>
      results && code === 0 ? resolve(results) : reject(new Error(`shard ${shard} exited ${code} without results: ${stderr.slice(-2_000)}`)),
    );
  });
}

test('every family × fault × caller gets the documented answer, one hold ended once with the documented amount, and a healthy gateway', async () => {
  const shards = await Promise.all(Array.from({ length: SHARDS }, (_, shard) => runShard(shard)));
  const results = [...planCells().notApplicable, ...shards.flat()];
  const passed = results.filter((r) => r.outcome === 'passed').length;
  const notApplicable = results.filter((r) => r.outcome === 'not applicable').length;
  const failures = failureList(results);
  console.log(matrixTable(results));
  for (const r of results.filter((r) => r.outcome === 'not applicable' && r.caller === 'waits')) console.log(`N/A: ${r.family} × ${r.fault}: ${r.reason}`);
  console.log(`fault matrix: ${passed} cells passed, ${notApplicable} not applicable${failures.length ? `, ${failures.length} failed` : ''}`);
  assert.equal(passed + notApplicable + failures.length, planCells().runnable.length + notApplicable, 'every cell ran');
  assert.equal(failures.length, 0, `${failures.length} cells failed:\n${failures.join('\n\n')}`);
});
