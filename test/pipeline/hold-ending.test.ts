// A call's hold is ended once, and shutdown waits for every end under way (pipeline/hold-ending.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { priceMicros } from '../../src/billing/prices.js';
import type { HoldEnd, Settlements } from '../../src/billing/settlements.js';
import { holdEndings, type PipelineMetrics } from '../../src/pipeline/hold-ending.js';
import type { HoldLogFields, MeteredRequest, ResolvedModel } from '../../src/pipeline/types.js';

const metrics: PipelineMetrics = {
  observeUpstream() {},
  addBilled() {},
  addUnbilled() {},
  countClamped() {},
  countUpstreamAuthFailure() {},
};
const log = { info() {}, warn() {}, error() {} };
const model = {
  id: 'm',
  config: { price: { input_token: 1, output_token: 2 }, context_window: 1_000, max_output_tokens: 100 },
  upstream: { name: 'ch', keyId: null },
} as unknown as ResolvedModel;

/** Settlements whose ends wait until the test lets them land. */
function heldSettlements() {
  const ends: { job: HoldEnd; land: () => void; fail: (error: Error) => void }[] = [];
  const settlements = {
    end: (job: HoldEnd) => new Promise((resolve, reject) => ends.push({ job, land: () => resolve({ applied: true }), fail: reject })),
  } as unknown as Settlements;
  return { settlements, ends };
}

function request(lines: HoldLogFields[]): MeteredRequest<unknown> {
  return {
    caller: {} as MeteredRequest<unknown>['caller'],
    modelId: 'm',
    body: {},
    requestId: 'req_1',
    signal: new AbortController().signal,
    addToLogLine: (fields) => lines.push(fields) > 0,
  };
}

const isSettled = async (promise: Promise<void>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('holdEndings', () => {
  test('with no end under way, settled() resolves at once', async () => {
    const { settlements } = heldSettlements();
    assert.equal(await isSettled(holdEndings({ settlements, metrics }).settled()), true);
  });

  test('settled() waits for every end under way, those begun after it was asked included', async () => {
    const { settlements, ends } = heldSettlements();
    const endings = holdEndings({ settlements, metrics });
    const lines: HoldLogFields[] = [];
    const estimate = { input_token: 3, output_token: 10 };
    const first = endings.holdEnding(model, 'hold_1', estimate, request(lines), log, performance.now());
    void first.end({ kind: 'settle', units: estimate, reason: 'answered' }, 'ok');
    const settled = endings.settled();
    const second = endings.holdEnding(model, 'hold_2', estimate, request(lines), log, performance.now());
    void second.end({ kind: 'release', reason: 'upstream failed' }, 'error');
    assert.equal(ends.length, 2);
    ends[0]!.land();
    assert.equal(await isSettled(settled), false);
    ends[1]!.land();
    assert.equal(await isSettled(settled), true);
    assert.deepEqual(
      lines.map((line) => [line.holdId, line.bill, line.chargeMicros]),
      [
        ['hold_1', 'settle', priceMicros(estimate, model.config.price)],
        ['hold_2', 'release', undefined],
      ],
    );
  });

  test('an end that fails is no longer under way, and its caller hears why', async () => {
    const { settlements, ends } = heldSettlements();
    const endings = holdEndings({ settlements, metrics });
    const ending = endings.holdEnding(model, 'hold_1', { input_token: 1 }, request([]), log, performance.now());
    const ended = ending.end({ kind: 'settle', units: { input_token: 1 }, reason: 'answered' }, 'ok');
    const settled = endings.settled();
    ends[0]!.fail(new Error('the hold could not be written'));
    await assert.rejects(ended, /could not be written/);
    assert.equal(await isSettled(settled), true);
  });

  test('a hold is ended once: a second end returns the first one’s promise', () => {
    const { settlements, ends } = heldSettlements();
    const ending = holdEndings({ settlements, metrics }).holdEnding(model, 'hold_1', {}, request([]), log, performance.now());
    const first = ending.end({ kind: 'release', reason: 'a' }, 'error');
    assert.equal(ending.end({ kind: 'release', reason: 'b' }, 'error'), first);
    assert.equal(ends.length, 1);
  });

  test('a figure the upstream reported that is not sane is settled on the gateway’s own count of the call, not the estimate, and flagged with the figure', () => {
    const { settlements, ends } = heldSettlements();
    const estimate = { input_token: 30, output_token: 100 };
    const ending = holdEndings({ settlements, metrics }).holdEnding(model, 'hold_1', estimate, request([]), log, performance.now());
    ending.counted = () => ({ input_token: 30, output_token: 4 });
    void ending.end({ kind: 'settle', units: { input_token: 25, output_token: -5 }, reason: 'completed' }, 'ok');
    const job = ends[0]!.job;
    assert.ok(job.kind === 'settle');
    assert.deepEqual(
      { units: job.units, chargeMicros: job.chargeMicros, flags: job.flags },
      {
        units: { input_token: 25, output_token: 4 },
        chargeMicros: priceMicros({ input_token: 25, output_token: 4 }, model.config.price),
        flags: ['clamped', 'clamped:output_token=-5'],
      },
    );
  });
});
