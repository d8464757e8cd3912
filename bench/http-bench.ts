// The HTTP bench: start the targets, measure each scenario, print the report, write the results.
import { statSync } from 'node:fs';
import { signedBedrockBaseline } from './bedrock-baseline.js';
import { describeRun, hostKind, type RunEnvironment, runEnvironment, writeJson, writeMarkdownSection } from './docs.js';
import { type MeasureSettings, ScenarioMeasurer, type ScenarioResult } from './measure.js';
import type { BenchOptions } from './options.js';
import {
  baselineNotes,
  checkTargets,
  emptyRunNotes,
  figuresTable,
  gatewayToFloorLine,
  gatewayToFloorTable,
  sweepRatioLines,
  sweepTables,
  type TargetCheck,
  targetsSummary,
  targetsTable,
} from './report.js';
import { BEDROCK_CHAT_BODY, type SweepGroup, scenariosOfRun, TARGETS, type TargetName } from './scenarios.js';
import { buildDist, startTargets } from './targets.js';
import { makeWorkDir, removeWorkDir } from './work-dir.js';
import { findWrk, wrkLoad } from './wrk.js';

const MAX_ERROR_RATE = 0.01;
const WRK_MISSING = 'wrk not found (or BENCH_WRK=none): load from the undici fallback in this process, which may itself limit the rates (apt-get install wrk)';

interface HttpBenchResults {
  environment: RunEnvironment;
  settings: {
    rounds: number;
    seconds: number;
    warmupSeconds: number;
    processWarmupSeconds: number;
    ttfbSeconds: number;
    loadGenerator: string;
    wrkThreads: number | null;
  };
  /** CPU ms a call of the first scenario in each fresh target's first seconds (the process warm-up); null without it. */
  coldStartCpuMsPerRequest: Record<TargetName, number | null>;
  scenarios: Record<string, ScenarioResult>;
  targets: TargetCheck[];
  gatewayLogBytes: number | null;
}

/** Resolves with the exit code: 0 when every run stayed under the error rate, targets met or not. */
export async function runHttpBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  buildDist();
  const wrk = findWrk();
  const loadGenerator = wrk ? wrkLoad(wrk, options.wrkThreads) : 'undici fallback (no wrk)';
  const workDir = makeWorkDir();
  try {
    const targets = await startTargets(workDir, interrupted);
    try {
      const bedrockBaseline = await signedBedrockBaseline(targets.urls.direct, BEDROCK_CHAT_BODY);
      const { chosen, warmUp, sweepGroups } = scenariosOfRun(targets.gatewayKey, options, bedrockBaseline);
      const environment = runEnvironment();
      const settings: MeasureSettings = { ...options, wrk, workDir };
      const out = (line: string) => process.stdout.write(`${line}\n`);
      out(`tollroute bench${options.sweep ? ' (sweep)' : ''}: ${describeRun(environment, settings, loadGenerator)}`);
      out(`  pids: sandbox ${targets.sandbox.pid}, floor ${targets.processes.floor.pid}, gateway ${targets.processes.gateway.pid}`);
      if (!wrk) out(`  ${WRK_MISSING}`);

      const measurer = new ScenarioMeasurer(targets, settings, out);
      const coldStartCpuMsPerRequest = await measurer.warmUpProcesses(warmUp);
      if (settings.processWarmupSeconds > 0) out(`  ${coldStartNote(warmUp[0]!.name, coldStartCpuMsPerRequest)}`);
      const results: ScenarioResult[] = [];
      for (const scenario of chosen) results.push(await measurer.measure(scenario));
      const checks = checkTargets(results);

      out(`\n${figuresTable(results, 'text')}`);
      for (const note of [...baselineNotes(results), ...emptyRunNotes(results)]) out(`  ${note}`);
      out(`\n${gatewayToFloorTable(results, 'text')}`);
      if (options.sweep) out(`\n${sweepTables(results, sweepGroups, 'text')}`);
      if (checks.length > 0) {
        out(`\ntargets, against the floor and direct of this run:\n${targetsTable(checks, 'text')}`);
        out(targetsSummary(checks));
      }
      if (!wrk) out(`\n${WRK_MISSING}`);

      const data: HttpBenchResults = {
        environment,
        settings: { ...pick(options), loadGenerator, wrkThreads: wrk ? options.wrkThreads : null },
        coldStartCpuMsPerRequest,
        scenarios: Object.fromEntries(results.map((r) => [r.name, r])),
        targets: checks,
        gatewayLogBytes: fileSize(targets.gatewayLogFile),
      };
      const section = options.sweep ? 'sweep' : 'results';
      out(`\nresults written to ${writeJson(section, data)}`);
      if (options.writeDocs) {
        const markdown = options.sweep ? sweepMarkdown(data, results, sweepGroups) : resultsMarkdown(data, results, checks);
        // The default scenarios' targets hold per host kind: each kind keeps its own table.
        const kind = options.sweep ? undefined : hostKind(environment.cpuModel, environment.cpu.family, environment.cpu.pageTableIsolation);
        out(`${section} written to ${writeMarkdownSection(section, markdown, kind)}`);
      }
      return errorRateExitCode(results);
    } finally {
      await targets.stop();
    }
  } finally {
    // Kept on request: the gateway's log and store, to look into a surprising figure.
    removeWorkDir(workDir);
  }
}

const pick = ({ rounds, seconds, warmupSeconds, processWarmupSeconds, ttfbSeconds }: BenchOptions) => ({
  rounds,
  seconds,
  warmupSeconds,
  processWarmupSeconds,
  ttfbSeconds,
});

/** The process warm-up's line: what the first scenario's call cost each fresh target, to set beside its measured rounds. */
export function coldStartNote(scenario: string, cpuMs: Record<TargetName, number | null>): string {
  const figure = (target: TargetName) => `${target} ${cpuMs[target] === null ? 'n/a' : cpuMs[target]!.toFixed(3)}`;
  return `cold start (the process warm-up): ${scenario} in each fresh target's first seconds, CPU ms a call: ${TARGETS.map(figure).join(', ')}`;
}

function fileSize(file: string): number | null {
  try {
    return statSync(file).size;
  } catch {
    return null;
  }
}

function errorRateExitCode(results: ScenarioResult[]): number {
  const failing = results.flatMap((r) =>
    Object.entries(r.targets)
      .filter(([, t]) => t.errorRate > MAX_ERROR_RATE)
      .map(([target, t]) => `${r.name} (${target}): ${t.errors} of ${t.requests} failed`),
  );
  if (failing.length === 0) return 0;
  process.stderr.write(`bench: error rate above ${MAX_ERROR_RATE * 100}%:\n  ${failing.join('\n  ')}\n`);
  return 1;
}

/** The page carries the targets and the gateway against the floor in one line; every figure stays in the JSON. */
function resultsMarkdown(data: HttpBenchResults, results: ScenarioResult[], checks: TargetCheck[]): string {
  const coldStart = data.settings.processWarmupSeconds > 0 ? [coldStartNote(results[0]!.name, data.coldStartCpuMsPerRequest)] : [];
  const notes = [gatewayToFloorLine(results), ...emptyRunNotes(results), ...coldStart].map((n) => `- ${n}`);
  return [
    `Run of ${describeRun(data.environment, data.settings, data.settings.loadGenerator)}.`,
    '',
    targetsTable(checks, 'markdown'),
    '',
    `${targetsSummary(checks)}.`,
    '',
    ...notes,
  ].join('\n');
}

function sweepMarkdown(data: HttpBenchResults, results: ScenarioResult[], groups: SweepGroup[]): string {
  const lines = sweepRatioLines(results, groups).map((line) => `- ${line}`);
  return [`Run of ${describeRun(data.environment, data.settings, data.settings.loadGenerator)}; gateway ÷ floor:`, '', ...lines].join('\n');
}
