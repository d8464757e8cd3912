// The lines docs/benchmarks.md carries in place of the wide tables: each scenario's gateway ÷ floor
// ratios, and each sweep group's, in the order of the run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ScenarioResult } from '../../bench/measure.js';
import { gatewayToFloorLine, sweepRatioLines } from '../../bench/report.js';
import type { SweepGroup } from '../../bench/scenarios.js';

/** Only the ratios are read by these lines; the rest of a result is left out. */
const result = (name: string, requestsPerSecond: number, cpuMsPerRequest: number) =>
  ({ name, gatewayToFloor: { requestsPerSecond, cpuMsPerRequest } }) as unknown as ScenarioResult;

test('the gateway-to-floor line gives every scenario its req/s and CPU ratios', () => {
  const line = gatewayToFloorLine([result('chat-plain-c50', 0.86, 1.34), result('search-c50', 0.69, 1.84)]);
  assert.equal(line, 'gateway ÷ floor, req/s / CPU a call: chat-plain-c50 0.86× / 1.34×; search-c50 0.69× / 1.84×');
});

test('a sweep line names its group and each point measured, and a group with no point measured has no line', () => {
  const groups = [
    {
      title: 'Connections (plain chat)',
      axis: 'connections',
      points: [
        { value: '1', scenario: 'a' },
        { value: '50', scenario: 'b' },
      ],
    },
    { title: 'Request size', axis: 'prompt', points: [{ value: '1 MB', scenario: 'not-run' }] },
  ] as unknown as SweepGroup[];
  const lines = sweepRatioLines([result('a', 0.72, 1.82), result('b', 0.85, 1.35)], groups);
  assert.deepEqual(lines, ['Connections (plain chat): 1: 0.72× req/s, 1.82× CPU; 50: 0.85× req/s, 1.35× CPU']);
});
