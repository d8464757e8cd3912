// The --parts bench splits a CPU profile's samples into the parts of a call, counting only the
// samples of its measured runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { partsTable } from '../../bench/parts.js';
import { type CpuProfile, partOf, partsPerCall } from '../../bench/profile-parts.js';

const frame = (functionName: string, url = '') => ({ functionName, url });

test('a sampled function is put in the part its module belongs to', () => {
  assert.equal(partOf(frame('writeHoldSettle', 'file:///repo/dist/store/hot-ledger/sqlite-steps.js')), 'hot ledger (its code, SQLite statements, commits)');
  assert.equal(partOf(frame('', 'file:///repo/dist/store/usage-recent.js')), 'hot ledger (its code, SQLite statements, commits)');
  assert.equal(partOf(frame('run', 'file:///repo/dist/pipeline/metered-call.js')), 'own code');
  assert.equal(partOf(frame('formatRequestLine', 'file:///repo/dist/http/request-line.js')), 'log (pino, block writes)');
  assert.equal(partOf(frame('lookup', 'file:///repo/node_modules/find-my-way/index.js')), 'Fastify (router, validation, body parser)');
  assert.equal(partOf(frame('_resume', 'file:///repo/node_modules/undici/lib/dispatcher/client.js')), 'undici (upstream requests)');
  assert.equal(partOf(frame('writev')), 'socket writes (writev)');
  assert.equal(partOf(frame('writeBuffer')), 'log (pino, block writes)');
  assert.equal(partOf(frame('(garbage collector)')), 'garbage collector');
  assert.equal(partOf(frame('processTicksAndRejections', 'node:internal/process/task_queues')), 'promise and tick queues');
  assert.equal(partOf(frame('wrapSafe', 'node:internal/modules/cjs/loader')), 'module loading (start-up)');
  assert.equal(partOf(frame('emit', 'node:events')), "Node's core (streams, events, http, buffers, timers)");
  assert.equal(partOf(frame('observe', 'file:///repo/node_modules/prom-client/lib/histogram.js')), 'other packages and natives');
});

test("a relay's own script counts as its own code, though it lies under node_modules/.cache", () => {
  const url = 'file:///repo/node_modules/.cache/tollroute-bench/minimal-relay.mjs';
  assert.equal(partOf(frame('postChat', url), 'minimal-relay.mjs'), 'own code');
  assert.equal(partOf(frame('postChat', url)), 'other packages and natives');
});

test('only the samples inside the measured windows count, idle left out, divided by the calls', () => {
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(idle)') },
      { id: 2, callFrame: frame('writev') },
      { id: 3, callFrame: frame('run', 'file:///repo/dist/pipeline/metered-call.js') },
    ],
    startTime: 1_000,
    // samples at 1 100 (run), 1 200 (writev), 1 300 (idle), 1 400 (run), 1 500 (run)
    samples: [3, 2, 1, 3, 3],
    timeDeltas: [100, 100, 100, 100, 100],
  };
  const parts = partsPerCall(profile, [{ from: 1_150, to: 1_450 }], 2);
  assert.equal(parts['socket writes (writev)'], 50); // the sample at 1 200: 100 µs over 2 calls
  assert.equal(parts['own code'], 50); // the one at 1 400; those at 1 100 and 1 500 are outside
  assert.equal(parts['garbage collector'], 0);
});

test('a profile with no sample in the windows is refused rather than read as free', () => {
  const profile: CpuProfile = { nodes: [{ id: 1, callFrame: frame('writev') }], startTime: 0, samples: [1], timeDeltas: [10] };
  assert.throws(() => partsPerCall(profile, [{ from: 1_000, to: 2_000 }], 1), /no sample/);
});

test('the parts table puts the CPU time and the busy total first, then each part with its difference', () => {
  const relay = { ...emptyParts(), 'socket writes (writev)': 60, 'own code': 5 };
  const gateway = { ...emptyParts(), 'socket writes (writev)': 55, 'own code': 40, 'hot ledger (its code, SQLite statements, commits)': 30 };
  const table = partsTable({ relay, gateway, mainThreadCpuMicros: { relay: 64, gateway: 120 } }, 'markdown');
  const lines = table.split('\n');
  assert.match(lines[2]!, /main thread's CPU time.*\| 64\.0 \| 120\.0 \| 56\.0 \|/);
  assert.match(lines[3]!, /sampled busy, all parts \| 65\.0 \| 125\.0 \| 60\.0 \|/);
  assert.ok(lines.some((line) => /hot ledger.*\| 0\.0 \| 30\.0 \| 30\.0 \|/.test(line)));
  assert.ok(lines.some((line) => /socket writes.*\| 60\.0 \| 55\.0 \| -5\.0 \|/.test(line)));
});

/** Every part at zero: a window holding one idle sample. */
function emptyParts() {
  return partsPerCall({ nodes: [{ id: 1, callFrame: frame('(idle)') }], startTime: 0, samples: [1], timeDeltas: [1] }, [{ from: 0, to: 2 }], 1);
}
