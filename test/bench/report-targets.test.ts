import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScenarioResult, TargetRun, TargetSummary } from '../../bench/measure.js';
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

/** One round's run of a target: its calls a second, CPU a call and p99; the rest as a quiet run. */
function run(round: number, figures: { rps?: number; cpuMs?: number; p99Ms?: number }): TargetRun {
  return {
    round,
    load: {
      tool: 'wrk',
      requests: 1_000,
      seconds: 1,
      errors: 0,
      errorKinds: {},
      requestsPerSecond: figures.rps ?? 1_000,
      latencyMs: { p50: 1, p90: 1, p99: figures.p99Ms ?? 1, p999: 1 },
    },
    ttfb: { requests: 10, errors: 0, headersMs: { p50: 1, p99: 1 }, firstByteMs: { p50: 1, p99: 1 } },
    cpuMsPerRequest: figures.cpuMs ?? 0.1,
    sandboxCpuMsPerRequest: null,
    mainThreadBusy: null,
    peakRssBytes: null,
    rssAfterBytes: null,
    peakIsPerRun: true,
  };
}

/** Plain chat at 50 connections over rounds: each target's calls a second and CPU a call, round by round. */
function fiftyConnections(
  rounds: Record<'direct' | 'floor' | 'gateway', { rps: number; cpuMs: number }[]>,
  medians: { rps: number; cpu: number },
): ScenarioResult {
  const target = (name: 'direct' | 'floor' | 'gateway') => summary({ runs: rounds[name].map((figures, i) => run(i + 1, figures)) });
  return {
    name: 'chat-plain-c50',
    connections: 50,
    targets: { direct: target('direct'), floor: target('floor'), gateway: target('gateway') },
    added: { floor: { p50Ms: 0, p99Ms: 0, ttfbMs: 0 }, gateway: { p50Ms: 0, p99Ms: 0, ttfbMs: 0 } },
    gatewayToFloor: { requestsPerSecond: medians.rps, cpuMsPerRequest: medians.cpu },
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

describe('the targets round by round', () => {
  const direct = [1, 2, 3].map(() => ({ rps: 9_000, cpuMs: 0.05 }));
  // The floor's speed swings between rounds; the gateway keeps 0.75, 0.65 and 0.67 of it, at 1.4, 1.6 and 1.5 its CPU.
  const floor = [
    { rps: 1_000, cpuMs: 0.1 },
    { rps: 2_000, cpuMs: 0.1 },
    { rps: 1_500, cpuMs: 0.2 },
  ];
  const gateway = [
    { rps: 750, cpuMs: 0.14 },
    { rps: 1_300, cpuMs: 0.16 },
    { rps: 1_000, cpuMs: 0.3 },
  ];
  const checks = checkTargets([fiftyConnections({ direct, floor, gateway }, { rps: 0.67, cpu: 1.5 })]);
  const check = (goal: string) => {
    const found = checks.find((c) => c.goal.startsWith(goal));
    assert.ok(found, `${goal}: checked`);
    return found;
  };

  it("counts the rounds in which the gateway kept up with that round's own floor", () => {
    assert.deepEqual(check('gateway req/s').roundsMet, { met: 1, of: 3 });
  });

  it("counts the rounds in which the gateway's CPU a call stayed within the multiple of that round's floor", () => {
    assert.deepEqual(check('gateway CPU/req').roundsMet, { met: 2, of: 3 });
  });

  it('counts the rounds of a time added over direct from each round’s own direct run', () => {
    const result = oneConnection({ direct: 2, floor: 3, gateway: 3 });
    result.targets.direct.runs = [run(1, { p99Ms: 2 }), run(2, { p99Ms: 1 })];
    result.targets.floor.runs = [run(1, { p99Ms: 3 }), run(2, { p99Ms: 3 })];
    result.targets.gateway.runs = [run(1, { p99Ms: 3.5 }), run(2, { p99Ms: 3.5 })];
    assert.deepEqual(p99Check(result).roundsMet, { met: 1, of: 2 });
  });

  it('shows the rounds met beside each verdict, and none for a run whose rounds were not recorded', () => {
    const table = targetsTable([...checks, p99Check(oneConnection({ direct: 2, floor: 3, gateway: 3 }))], 'markdown');
    assert.match(table, /\| rounds met \|/);
    assert.match(table, /\| gateway req\/s ≥ 0\.7 × floor \| NOT MET \| 1 of 3 \|/);
    assert.match(table, /\| gateway added p99 ≤ 2 ms over direct \| MET \| {2}\|/);
  });

  it('says in the one-line verdict how many targets were split between rounds', () => {
    assert.equal(targetsSummary(checks), '1 of 2 targets met (2 split between rounds)');
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
