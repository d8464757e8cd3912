// `npm run bench -- --compare <ref>`: two builds of the gateway measured side by side, neither
// always first, and reported as medians and ratios.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILDS, type CompareResults, type CompareRun, compareTable, roundLoads, roundOrder } from '../../bench/compare.js';
import { parseOptions } from '../../bench/options.js';

test('the builds take turns at going first, round by round', () => {
  const firsts = [1, 2, 3, 4, 5, 6].map((round) => roundOrder(round)[0]);
  assert.deepEqual(firsts, ['before', 'after', 'before', 'after', 'before', 'after']);
  for (const round of [1, 2, 3]) assert.deepEqual([...roundOrder(round)].sort(), [...BUILDS].sort(), 'both run in every round');
});

test('the table gives each build its medians (the first byte at one connection too), after ÷ before, and the rounds in which after used less CPU', () => {
  const run = (round: number, requestsPerSecond: number, cpuMsPerRequest: number | null, ttfbMs: number): CompareRun => ({
    round,
    requestsPerSecond,
    cpuMsPerRequest,
    p50Ms: 1,
    p99Ms: 4,
    ttfbMs,
    errors: 0,
  });
  const results = {
    scenarios: {
      'chat-plain-c50': {
        before: [run(1, 1000, 0.2, 1.2), run(2, 1100, 0.22, 1.0), run(3, 900, 0.18, 1.4)],
        after: [run(1, 1200, 0.1, 0.9), run(2, 1000, 0.3, 0.5), run(3, 1400, 0.12, 0.6)],
      },
    },
  } as unknown as CompareResults;
  // Below the header and its rule: each row's cells, split where two spaces or more part them.
  const rows = compareTable(results)
    .split('\n')
    .slice(2)
    .map((line) => line.trim().split(/\s{2,}/));
  const row = (label: string) => rows.find((cells) => cells.includes(label));
  assert.deepEqual(row('before'), ['chat-plain-c50', 'before', '1000', '200.0', '1.00', '4.00', '1.200']);
  assert.deepEqual(row('after'), ['after', '1200', '120.0', '1.00', '4.00', '0.600']);
  assert.deepEqual(row('after ÷ before'), ['after ÷ before', '1.20×', '0.60×', '1.00×', '1.00×', '0.50×', '2 of 3']);
});

test('--compare takes the ref that follows it, and refuses to go without one or to write the docs', () => {
  assert.equal(parseOptions(['--compare', 'HEAD~1']).compare, 'HEAD~1');
  assert.equal(parseOptions(['--compare=main', '--only', 'chat-plain-c50']).compare, 'main');
  assert.equal(parseOptions([]).compare, undefined);
  assert.throws(() => parseOptions(['--compare']), /--compare needs a git ref/);
  assert.throws(() => parseOptions(['--compare', 'HEAD', '--write-docs']), /cannot --write-docs/);
});

test('with --paired both builds are loaded at once in every round; without it, one at a time in the round order', () => {
  for (const round of [1, 2, 3]) {
    assert.deepEqual(roundLoads(round, true), [BUILDS]);
    assert.deepEqual(
      roundLoads(round, false),
      roundOrder(round).map((build) => [build]),
    );
  }
  assert.deepEqual(roundLoads(2, false), [['after'], ['before']]);
});

test('--paired goes only with --compare', () => {
  assert.equal(parseOptions(['--compare', 'HEAD', '--paired']).paired, true);
  assert.equal(parseOptions(['--compare', 'HEAD']).paired, false);
  assert.throws(() => parseOptions(['--paired']), /needs --compare/);
});
