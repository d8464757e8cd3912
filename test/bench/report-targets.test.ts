import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScenarioResult, TargetSummary } from '../../bench/measure.js';
import { checkTargets, targetsSummary, targetsTable, verdict } from '../../bench/report.js';
import { buildScenarios } from '../../bench/scenarios.js';

/** A target's medians: only what the checks read is set apart from zero. */
function summary(figures: Partial<TargetSummary>): TargetSummary {
  return {
    requests: 1_000,
    errors: 0,
    errorRate: 0,
    requestsPerSecond: 1_000,
    p50Ms: 0,
    p90Ms: 0,
    p99Ms: 0,
    p999Ms: 0,
    ttfbMs: 0,
    ttfbHeadersMs: 0,
    cpuMsPerRequest: 0.1,
    sandboxCpuMsPerRequest: null,
    mainThreadBusy: null,
    peakRssBytes: null,
    rssAfterBytes: null,
    runs: [],
    ...figures,
  };
}

/** One connection's plain chat, its p99s in ms as given for direct, the floor and the gateway. */
function oneConnection(p99: { direct: number; floor: number; gateway: number }): ScenarioResult {
  const targets = { direct: summary({ p99Ms: p99.direct }), floor: summary({ p99Ms: p99.floor }), gateway: summary({ p99Ms: p99.gateway }) };
  const added = (target: 'floor' | 'gateway') => ({ p50Ms: 0, p99Ms: targets[target].p99Ms - p99.direct, ttfbMs: 0 });
  return {
    name: 'chat-plain-c1',
    connections: 1,
    targets,
    added: { floor: added('floor'), gateway: added('gateway') },
    gatewayToFloor: { requestsPerSecond: 1, cpuMsPerRequest: 1 },
  };
}

const p99Check = (result: ScenarioResult) => {
  const check = checkTargets([result]).find((c) => c.goal.includes('p99'));
  assert.ok(check, 'the one-connection p99 target is checked');
  return check;
};

describe('the bench report of the targets', () => {
  it('says a miss is shared by the floor when the bare proxy itself adds more than the target allows', () => {
    const check = p99Check(oneConnection({ direct: 2.5, floor: 5.4, gateway: 6.9 }));
    assert.equal(check.met, false);
    assert.equal(check.floorMet, false);
    assert.equal(verdict(check), 'NOT MET, nor by the floor');
    assert.match(check.figures, /the floor \+2\.900 ms/);
  });

  it('reports a plain miss when the floor keeps within the target and the gateway does not', () => {
    const check = p99Check(oneConnection({ direct: 2.0, floor: 3.0, gateway: 4.5 }));
    assert.equal(check.met, false);
    assert.equal(check.floorMet, true);
    assert.equal(verdict(check), 'NOT MET');
  });

  it('counts a target the gateway keeps within as met, whatever the floor did', () => {
    const check = p99Check(oneConnection({ direct: 2.0, floor: 4.5, gateway: 3.5 }));
    assert.equal(check.met, true);
    assert.equal(verdict(check), 'MET');
    assert.match(targetsTable([check], 'text'), /MET/);
  });

  it('checks the calls a second of every stream of the default run at 50 connections against the floor', () => {
    const streams = buildScenarios('tr-bench').defaults.filter((s) => s.name.endsWith('stream-c50') || /^chat-stream-\d+w-c50$/.test(s.name));
    const results = streams.map(
      ({ name }): ScenarioResult => ({
        name,
        connections: 50,
        targets: { direct: summary({}), floor: summary({}), gateway: summary({}) },
        added: { floor: { p50Ms: 0, p99Ms: 0, ttfbMs: 0 }, gateway: { p50Ms: 0, p99Ms: 0, ttfbMs: 0 } },
        gatewayToFloor: { requestsPerSecond: 1, cpuMsPerRequest: 1 },
      }),
    );
    const checked = new Set(
      checkTargets(results)
        .filter((c) => c.goal.startsWith('gateway req/s'))
        .map((c) => c.scenario),
    );
    assert.ok(streams.length >= 6);
    for (const { name } of streams) assert.ok(checked.has(name), `${name}: its req/s target is checked`);
  });
});

describe('the one-line verdict of a run', () => {
  it('counts the targets met, and how many of the misses the floor shares', () => {
    const checks = checkTargets([oneConnection({ direct: 2.5, floor: 5.4, gateway: 6.9 })]);
    // the p50 target (0 added) is met; the p99 is missed by both
    assert.equal(targetsSummary(checks), '1 of 2 targets met (1 missed by the floor as well)');
  });

  it('names no shared miss when the floor kept within every target the gateway missed', () => {
    const checks = checkTargets([oneConnection({ direct: 2.0, floor: 3.0, gateway: 4.5 })]);
    assert.equal(targetsSummary(checks), '1 of 2 targets met');
  });
});
