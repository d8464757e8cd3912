// One scenario, measured: each target checked once, then round by round direct, floor, gateway,
// each a warm-up, a measured load run with the processes' CPU and memory read around it, and a
// TTFB run at one connection. The figures reported are the medians over rounds.
import { Pool } from 'undici';
import { recentGatewayErrors } from './gateway-log.js';
import { readWhole, runUndiciLoad } from './load.js';
import type { LoadRun, LoadSpec } from './load-run.js';
import { cpuMeter, mainThreadBusyMeter, peakRssBytes, resetPeakRss, rssBytes } from './proc-stats.js';
import { type BenchRequest, type Scenario, TARGETS, type TargetName } from './scenarios.js';
import { median, medianOrNull } from './stats.js';
import type { Targets } from './targets.js';
import { measureTtfb, type TtfbFigures } from './ttfb.js';
import { runWrk } from './wrk.js';

export interface MeasureSettings {
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  /** Before the first scenario: each target loaded with each scenario's call for this long (0: none). */
  processWarmupSeconds: number;
  ttfbSeconds: number;
  wrkThreads: number;
  /** wrk's path; null: the undici fallback. */
  wrk: string | null;
  workDir: string;
}

export interface TargetRun {
  round: number;
  load: LoadRun;
  ttfb: TtfbFigures;
  /** CPU ms of the target's own process per request answered. */
  cpuMsPerRequest: number | null;
  /** The sandbox's, in the floor and gateway runs (in direct runs it is the target). */
  sandboxCpuMsPerRequest: number | null;
  /** The share of the run's wall time the target's main thread (its event loop) was on a core, 0 to 1. */
  mainThreadBusy: number | null;
  peakRssBytes: number | null;
  rssAfterBytes: number | null;
  /** False when the kernel would not reset the peak: it is then the process's lifetime peak. */
  peakIsPerRun: boolean;
}

/** Medians over rounds, but errors and requests summed. */
export interface TargetSummary {
  requests: number;
  errors: number;
  errorRate: number;
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  ttfbMs: number;
  ttfbHeadersMs: number;
  cpuMsPerRequest: number | null;
  sandboxCpuMsPerRequest: number | null;
  mainThreadBusy: number | null;
  peakRssBytes: number | null;
  rssAfterBytes: number | null;
  runs: TargetRun[];
}

export interface ScenarioResult {
  name: string;
  connections: number;
  baseline?: string;
  targets: Record<TargetName, TargetSummary>;
  /** Over direct, in ms, from the medians. */
  added: Record<'floor' | 'gateway', { p50Ms: number; p99Ms: number; ttfbMs: number }>;
  /** gateway / floor. */
  gatewayToFloor: { requestsPerSecond: number; cpuMsPerRequest: number | null };
}

export class ScenarioMeasurer {
  constructor(
    private readonly targets: Targets,
    private readonly settings: MeasureSettings,
    private readonly progress: (line: string) => void,
  ) {}

  private load(request: BenchRequest, spec: LoadSpec): Promise<LoadRun> {
    const { wrk, wrkThreads, workDir } = this.settings;
    const broken = this.targets.broken;
    return wrk ? runWrk(request, { ...spec, wrk, threads: wrkThreads, workDir, broken }) : runUndiciLoad(request, { ...spec, broken });
  }

  private requestFor(scenario: Scenario, target: TargetName): BenchRequest {
    return target === 'gateway' ? scenario.gateway : scenario.upstream;
  }

  /** One request per target, read whole: a 200 with its end marker, or the bench stops here. */
  private async check(scenario: Scenario): Promise<void> {
    for (const target of TARGETS) {
      const pool = new Pool(this.targets.urls[target], { connections: 1 });
      try {
        await Promise.race([readWhole(pool, this.requestFor(scenario, target)), this.targets.broken]);
      } catch (error) {
        throw new Error(`${scenario.name}: ${target} did not answer as expected: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await pool.destroy();
      }
    }
  }

  /**
   * Before any round: every target, fresh from its start, loaded with each scenario's call in turn
   * (each call checked whole first, so a target that answers wrongly is named as check() names it).
   * A fresh gateway runs its first few thousand calls before V8 has optimized them, at several times
   * the CPU a call of a warm one (measured: 1.06 ms in its first 2 s, 0.23 after), and the first
   * scenario's first rounds would be those calls; the floor and direct, a few functions each, cost
   * little more cold. Returns each target's CPU ms a call of the first scenario in its first
   * seconds: what a cold start costs.
   */
  async warmUpProcesses(scenarios: Scenario[]): Promise<Record<TargetName, number | null>> {
    const coldCpuMs: Record<TargetName, number | null> = { direct: null, floor: null, gateway: null };
    if (this.settings.processWarmupSeconds <= 0) return coldCpuMs;
    for (const scenario of scenarios) await this.check(scenario);
    for (const target of TARGETS) {
      for (const [index, scenario] of scenarios.entries()) {
        const cpu = cpuMeter(this.targets.processes[target].pid);
        const spec = { url: this.targets.urls[target], connections: scenario.connections, seconds: this.settings.processWarmupSeconds };
        const run = await this.load(this.requestFor(scenario, target), spec);
        this.failOnWarmupErrors(scenario, target, run);
        if (index === 0) coldCpuMs[target] = cpu.perRequest(run.requests);
      }
    }
    return coldCpuMs;
  }

  /** Any failed warm-up request stops the bench, naming the gateway's last errors when it is the one failing. */
  private failOnWarmupErrors(scenario: Scenario, target: TargetName, warmup: LoadRun): void {
    if (warmup.errors === 0) return;
    const logged = target === 'gateway' ? recentGatewayErrors(this.targets.gatewayLogFile) : [];
    throw new Error(
      `${scenario.name}: ${warmup.errors} of ${warmup.requests} warm-up requests to ${target} failed (${JSON.stringify(warmup.errorKinds)})` +
        (target !== 'gateway' ? '' : logged.length > 0 ? `; the gateway's last errors:\n${logged.join('\n')}` : "; the gateway's log has no error lines"),
    );
  }

  private async runOnce(scenario: Scenario, target: TargetName, round: number): Promise<TargetRun> {
    const request = this.requestFor(scenario, target);
    const spec = { url: this.targets.urls[target], connections: scenario.connections };
    this.failOnWarmupErrors(scenario, target, await this.load(request, { ...spec, seconds: this.settings.warmupSeconds }));

    const pid = this.targets.processes[target].pid;
    const sandboxPid = this.targets.sandbox.pid;
    const peakIsPerRun = resetPeakRss(pid);
    const cpu = cpuMeter(pid);
    const sandboxCpu = cpuMeter(sandboxPid);
    const mainThread = mainThreadBusyMeter(pid);
    const load = await this.load(request, { ...spec, seconds: this.settings.seconds });
    const mainThreadBusy = mainThread.busy();
    const cpuMsPerRequest = cpu.perRequest(load.requests);
    const sandboxCpuMsPerRequest = target === 'direct' ? null : sandboxCpu.perRequest(load.requests);
    const peak = peakRssBytes(pid);
    const rssAfter = rssBytes(pid);

    const ttfb = await measureTtfb(spec.url, request, { seconds: this.settings.ttfbSeconds, broken: this.targets.broken });
    return { round, load, ttfb, cpuMsPerRequest, sandboxCpuMsPerRequest, mainThreadBusy, peakRssBytes: peak, rssAfterBytes: rssAfter, peakIsPerRun };
  }

  async measure(scenario: Scenario): Promise<ScenarioResult> {
    await this.check(scenario);
    const runs: Record<TargetName, TargetRun[]> = { direct: [], floor: [], gateway: [] };
    for (let round = 1; round <= this.settings.rounds; round++) {
      for (const target of TARGETS) {
        const run = await this.runOnce(scenario, target, round);
        runs[target].push(run);
        this.progress(describeRun(scenario.name, target, round, this.settings.rounds, run));
      }
    }
    const targets = { direct: summarize(runs.direct), floor: summarize(runs.floor), gateway: summarize(runs.gateway) };
    const added = (target: 'floor' | 'gateway') => ({
      p50Ms: targets[target].p50Ms - targets.direct.p50Ms,
      p99Ms: targets[target].p99Ms - targets.direct.p99Ms,
      ttfbMs: targets[target].ttfbMs - targets.direct.ttfbMs,
    });
    const { gateway, floor } = targets;
    return {
      name: scenario.name,
      connections: scenario.connections,
      ...(scenario.baseline ? { baseline: scenario.baseline } : {}),
      targets,
      added: { floor: added('floor'), gateway: added('gateway') },
      gatewayToFloor: {
        requestsPerSecond: gateway.requestsPerSecond / floor.requestsPerSecond,
        cpuMsPerRequest: gateway.cpuMsPerRequest !== null && floor.cpuMsPerRequest ? gateway.cpuMsPerRequest / floor.cpuMsPerRequest : null,
      },
    };
  }
}

/** The latency figures a run gives, each of which a summary takes the median of over rounds. */
export const LATENCY_OF_RUN = {
  p50Ms: (r: TargetRun) => r.load.latencyMs.p50,
  p90Ms: (r: TargetRun) => r.load.latencyMs.p90,
  p99Ms: (r: TargetRun) => r.load.latencyMs.p99,
  p999Ms: (r: TargetRun) => r.load.latencyMs.p999,
  ttfbMs: (r: TargetRun) => r.ttfb.firstByteMs.p50,
  ttfbHeadersMs: (r: TargetRun) => r.ttfb.headersMs.p50,
};

function summarize(runs: TargetRun[]): TargetSummary {
  const requests = runs.reduce((sum, r) => sum + r.load.requests, 0);
  const errors = runs.reduce((sum, r) => sum + r.load.errors + r.ttfb.errors, 0);
  const of = (pick: (r: TargetRun) => number) => median(runs.map(pick));
  const ofNullable = (pick: (r: TargetRun) => number | null) => medianOrNull(runs.map(pick));
  return {
    requests,
    errors,
    // No answer at all within the run is a run too short for the scenario, told apart from failures.
    errorRate: requests === 0 ? 0 : errors / requests,
    requestsPerSecond: of((r) => r.load.requestsPerSecond),
    p50Ms: of(LATENCY_OF_RUN.p50Ms),
    p90Ms: of(LATENCY_OF_RUN.p90Ms),
    p99Ms: of(LATENCY_OF_RUN.p99Ms),
    p999Ms: of(LATENCY_OF_RUN.p999Ms),
    ttfbMs: of(LATENCY_OF_RUN.ttfbMs),
    ttfbHeadersMs: of(LATENCY_OF_RUN.ttfbHeadersMs),
    cpuMsPerRequest: ofNullable((r) => r.cpuMsPerRequest),
    sandboxCpuMsPerRequest: ofNullable((r) => r.sandboxCpuMsPerRequest),
    mainThreadBusy: ofNullable((r) => r.mainThreadBusy),
    peakRssBytes: ofNullable((r) => r.peakRssBytes),
    rssAfterBytes: ofNullable((r) => r.rssAfterBytes),
    runs,
  };
}

function describeRun(name: string, target: TargetName, round: number, rounds: number, run: TargetRun): string {
  const f = (n: number | null, digits = 2) => (n === null || Number.isNaN(n) ? 'n/a' : n.toFixed(digits));
  const { load } = run;
  return (
    `  ${name} round ${round}/${rounds} ${target.padEnd(7)} ${f(load.requestsPerSecond, 0).padStart(6)} req/s` +
    `  p50 ${f(load.latencyMs.p50)}  p99 ${f(load.latencyMs.p99)} ms  ttfb ${f(run.ttfb.firstByteMs.p50, 3)} ms` +
    `  cpu ${f(run.cpuMsPerRequest, 3)} ms/req  main thread busy ${f(run.mainThreadBusy)}${load.errors > 0 ? `  ERRORS ${load.errors}` : ''}`
  );
}
