// The report: every scenario's figures per target, the gateway against the floor, and the
// gateway's targets checked against the floor and direct runs of the same bench run (never
// against absolute times, which depend on the machine).
import { LATENCY_OF_RUN, type ScenarioResult, type TargetRun } from './measure.js';
import { type SweepGroup, TARGETS, type TargetName } from './scenarios.js';
import { count, fixed, markdownTable, megabytes, ratio, signed, textTable } from './table.js';

export type Format = 'text' | 'markdown';
const render = (format: Format, header: string[], rows: string[][], leftAligned = 1) =>
  format === 'text' ? textTable(header, rows, leftAligned) : markdownTable(header, rows, leftAligned);

export interface TargetCheck {
  scenario: string;
  goal: string;
  met: boolean;
  figures: string;
  /**
   * For a target of time added over direct: whether the floor (a bare proxy) keeps within it in the
   * same run. A target the floor itself misses is the machine's to miss (a third process in the path,
   * on cores the client and the sandbox share), and the report says so beside the gateway's verdict.
   */
  floorMet?: boolean;
  /**
   * In how many rounds the gateway met the target against the floor or direct of the same round.
   * The verdict is of the medians; where the machine's speed swings from round to round, this says
   * whether a verdict held in every round or only in some.
   */
  roundsMet?: { met: number; of: number };
}

const FIGURES_HEADER = [
  'target',
  'req/s',
  'p50 ms',
  'p99 ms',
  '+p50 ms',
  '+p99 ms',
  'TTFB ms',
  '+TTFB ms',
  'CPU ms/req',
  'main thread busy',
  'sandbox CPU ms/req',
  'peak RSS MB',
  'RSS after MB',
  'errors',
];

/** One row per target; `+` columns are over direct. */
function figureRows(result: ScenarioResult): string[][] {
  return TARGETS.map((target) => {
    const t = result.targets[target];
    const added = target === 'direct' ? undefined : result.added[target];
    return [
      target,
      count(t.requestsPerSecond),
      fixed(t.p50Ms),
      fixed(t.p99Ms),
      added ? signed(added.p50Ms) : '',
      added ? signed(added.p99Ms) : '',
      fixed(t.ttfbMs, 3),
      added ? signed(added.ttfbMs, 3) : '',
      fixed(t.cpuMsPerRequest, 3),
      fixed(t.mainThreadBusy),
      target === 'direct' ? '' : fixed(t.sandboxCpuMsPerRequest, 3),
      megabytes(t.peakRssBytes),
      megabytes(t.rssAfterBytes),
      t.errors === 0 ? '0' : `${t.errors} (${(t.errorRate * 100).toFixed(2)}%)`,
    ];
  });
}

/** Each scenario's rows, the scenario named on its first. */
function scenarioRows(results: ScenarioResult[], label: (r: ScenarioResult) => string): string[][] {
  return results.flatMap((r) => figureRows(r).map((row, i) => [i === 0 ? label(r) : '', ...row]));
}

export function figuresTable(results: ScenarioResult[], format: Format): string {
  return render(
    format,
    ['scenario', ...FIGURES_HEADER],
    scenarioRows(results, (r) => r.name),
    2,
  );
}

export function gatewayToFloorTable(results: ScenarioResult[], format: Format): string {
  return render(
    format,
    ['gateway ÷ floor', 'req/s', 'CPU ms/req', 'gateway − floor p50 ms', 'gateway − floor TTFB ms'],
    results.map((r) => [
      r.name,
      ratio(r.gatewayToFloor.requestsPerSecond),
      ratio(r.gatewayToFloor.cpuMsPerRequest),
      signed(r.targets.gateway.p50Ms - r.targets.floor.p50Ms),
      signed(r.targets.gateway.ttfbMs - r.targets.floor.ttfbMs, 3),
    ]),
  );
}

export function baselineNotes(results: ScenarioResult[]): string[] {
  return results.filter((r) => r.baseline).map((r) => `${r.name}: direct and floor call ${r.baseline}.`);
}

/** Runs where not one answer completed: the scenario needs longer than BENCH_SECONDS. */
export function emptyRunNotes(results: ScenarioResult[]): string[] {
  return results.flatMap((r) =>
    TARGETS.filter((target) => r.targets[target].runs.some((run) => run.load.requests === 0)).map(
      (target) => `${r.name} (${target}): no answer completed within a measured run; lengthen BENCH_SECONDS`,
    ),
  );
}

/** The gateway against the floor in one line, req/s and CPU a call per scenario, as docs/benchmarks.md carries it. */
export function gatewayToFloorLine(results: ScenarioResult[]): string {
  const points = results.map((r) => `${r.name} ${ratio(r.gatewayToFloor.requestsPerSecond)} / ${ratio(r.gatewayToFloor.cpuMsPerRequest)}`);
  return `gateway ÷ floor, req/s / CPU a call: ${points.join('; ')}`;
}

/** One line per sweep group: the gateway ÷ the floor at each point, as docs/benchmarks.md carries it. */
export function sweepRatioLines(results: ScenarioResult[], groups: SweepGroup[]): string[] {
  const byName = new Map(results.map((r) => [r.name, r]));
  return groups.flatMap((group) => {
    const points = group.points.flatMap((p) => {
      const result = byName.get(p.scenario);
      return result ? [`${p.value}: ${ratio(result.gatewayToFloor.requestsPerSecond)} req/s, ${ratio(result.gatewayToFloor.cpuMsPerRequest)} CPU`] : [];
    });
    return points.length === 0 ? [] : [`${group.title}: ${points.join('; ')}`];
  });
}

export function sweepTables(results: ScenarioResult[], groups: SweepGroup[], format: Format): string {
  const byName = new Map(results.map((r) => [r.name, r]));
  return groups
    .map((group) => {
      const points = group.points.flatMap((p) => {
        const result = byName.get(p.scenario);
        return result ? [{ value: p.value, result }] : [];
      });
      if (points.length === 0) return undefined;
      const rows = points.flatMap(({ value, result }) => figureRows(result).map((row, i) => [i === 0 ? value : '', ...row]));
      const ratios = points.map(
        ({ value, result }) => `${value}: ${ratio(result.gatewayToFloor.requestsPerSecond)} req/s, ${ratio(result.gatewayToFloor.cpuMsPerRequest)} CPU`,
      );
      const heading = format === 'markdown' ? `### ${group.title}` : `${group.title}:`;
      return [heading, '', render(format, [group.axis, ...FIGURES_HEADER], rows, 2), '', `gateway ÷ floor: ${ratios.join('; ')}`].join('\n');
    })
    .filter((table) => table !== undefined)
    .join('\n\n');
}

// ── the targets ──────────────────────────────────────────────────────────────────────────────────

const RPS_SHARE = 0.7;
const CPU_MULTIPLE = 1.5;
const C1_ADDED_P50_MS = 0.4;
const C1_ADDED_P99_MS = 2;
const STREAM_ADDED_TTFB_MS = 0.5;

/** Each round's runs of the three targets, matched by their round number. */
function roundsOf(result: ScenarioResult): Record<TargetName, TargetRun>[] {
  const runOf = (target: TargetName, round: number) => result.targets[target].runs.find((run) => run.round === round);
  return result.targets.gateway.runs.flatMap((gateway) => {
    const direct = runOf('direct', gateway.round);
    const floor = runOf('floor', gateway.round);
    return direct && floor ? [{ direct, floor, gateway }] : [];
  });
}

/** How many of the result's rounds `meets` holds in; undefined when no round was recorded whole. */
function roundsMeeting(result: ScenarioResult, meets: (round: Record<TargetName, TargetRun>) => boolean): TargetCheck['roundsMet'] {
  const rounds = roundsOf(result);
  return rounds.length === 0 ? undefined : { met: rounds.filter(meets).length, of: rounds.length };
}

export function checkTargets(results: ScenarioResult[]): TargetCheck[] {
  const byName = new Map(results.map((r) => [r.name, r]));
  const checks: TargetCheck[] = [];
  const rpsAgainstFloor = (scenario: string) => {
    const r = byName.get(scenario);
    if (!r) return;
    const { gateway, floor } = r.targets;
    checks.push({
      scenario,
      goal: `gateway req/s ≥ ${RPS_SHARE} × floor`,
      met: r.gatewayToFloor.requestsPerSecond >= RPS_SHARE,
      figures: `${count(gateway.requestsPerSecond)} / ${count(floor.requestsPerSecond)} req/s = ${ratio(r.gatewayToFloor.requestsPerSecond)}`,
      roundsMet: roundsMeeting(r, (round) => round.gateway.load.requestsPerSecond >= RPS_SHARE * round.floor.load.requestsPerSecond),
    });
  };
  const cpuAgainstFloor = (scenario: string) => {
    const r = byName.get(scenario);
    if (!r) return;
    const { gateway, floor } = r.targets;
    const share = r.gatewayToFloor.cpuMsPerRequest;
    checks.push({
      scenario,
      goal: `gateway CPU/req ≤ ${CPU_MULTIPLE} × floor`,
      met: share !== null && share <= CPU_MULTIPLE,
      figures: `${fixed(gateway.cpuMsPerRequest, 3)} / ${fixed(floor.cpuMsPerRequest, 3)} ms = ${ratio(share)}`,
      roundsMet: roundsMeeting(r, ({ gateway, floor }) => {
        if (gateway.cpuMsPerRequest === null || floor.cpuMsPerRequest === null) return false;
        return gateway.cpuMsPerRequest <= CPU_MULTIPLE * floor.cpuMsPerRequest;
      }),
    });
  };
  const addedOverDirect = (scenario: string, figure: 'p50Ms' | 'p99Ms' | 'ttfbMs', label: string, limitMs: number) => {
    const r = byName.get(scenario);
    if (!r) return;
    const added = r.added.gateway[figure];
    const floorAdded = r.added.floor[figure];
    const of = LATENCY_OF_RUN[figure];
    checks.push({
      scenario,
      goal: `gateway added ${label} ≤ ${limitMs} ms over direct`,
      met: added <= limitMs,
      figures: `${fixed(r.targets.gateway[figure], 3)} − ${fixed(r.targets.direct[figure], 3)} ms = ${signed(added, 3)} ms (the floor ${signed(floorAdded, 3)} ms)`,
      floorMet: floorAdded <= limitMs,
      roundsMet: roundsMeeting(r, (round) => of(round.gateway) - of(round.direct) <= limitMs),
    });
  };

  for (const scenario of ['chat-plain-c50', 'chat-plain-c200', 'chat-stream-64w-c50']) {
    rpsAgainstFloor(scenario);
    cpuAgainstFloor(scenario);
  }
  addedOverDirect('chat-plain-c1', 'p50Ms', 'p50', C1_ADDED_P50_MS);
  addedOverDirect('chat-plain-c1', 'p99Ms', 'p99', C1_ADDED_P99_MS);
  addedOverDirect('chat-stream-200w-c1', 'ttfbMs', 'TTFB', STREAM_ADDED_TTFB_MS);
  addedOverDirect('chat-stream-64w-c1', 'ttfbMs', 'TTFB', STREAM_ADDED_TTFB_MS);
  const streams = [
    'chat-stream-200w-c50',
    'messages-stream-c50',
    'messages-translated-stream-c50',
    'responses-stream-c50',
    'gemini-translated-stream-c50',
    'chat-bedrock-stream-c50',
    'speech-stream-c50',
  ];
  for (const scenario of streams) rpsAgainstFloor(scenario);
  rpsAgainstFloor('embeddings-c50');
  return checks;
}

/** A target the gateway missed and the floor missed too. */
const missedByBoth = (check: TargetCheck) => !check.met && check.floorMet === false;

/** MET or NOT MET; a miss that the floor shares is marked as such (still a miss: the target is the gateway's). */
export const verdict = (check: TargetCheck): string => (check.met ? 'MET' : missedByBoth(check) ? 'NOT MET, nor by the floor' : 'NOT MET');

/** A target met in some rounds and missed in others: its verdict is the machine's as much as the gateway's. */
const splitBetweenRounds = ({ roundsMet }: TargetCheck) => roundsMet !== undefined && roundsMet.met > 0 && roundsMet.met < roundsMet.of;

/** `6 of 10 targets met (1 missed by the floor as well; 2 split between rounds)`: the run's verdict in one line. */
export function targetsSummary(checks: TargetCheck[]): string {
  const met = checks.filter((c) => c.met).length;
  const shared = checks.filter(missedByBoth).length;
  const split = checks.filter(splitBetweenRounds).length;
  const notes = [shared > 0 ? `${shared} missed by the floor as well` : '', split > 0 ? `${split} split between rounds` : ''].filter(Boolean);
  return `${met} of ${checks.length} targets met${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

export function targetsTable(checks: TargetCheck[], format: Format): string {
  return render(
    format,
    ['scenario', 'target', 'result', 'rounds met', 'figures (gateway / floor, or gateway − direct)'],
    checks.map((c) => [c.scenario, c.goal, verdict(c), c.roundsMet ? `${c.roundsMet.met} of ${c.roundsMet.of}` : '', c.figures]),
    5,
  );
}
