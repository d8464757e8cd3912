// `npm run bench -- --instructions`: the instructions the floor and the gateway execute per call,
// counted by valgrind's callgrind. CPU time on a shared virtual machine swings two to three times
// within minutes; an instruction count repeats to a per cent or two, so a change to the hot path
// can be judged by it where timings cannot. It counts user space only (not the kernel's share of a
// call) and runs each target some fifty times slower: it measures work, not speed.
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { callInstructions, emptyCounts, INSTRUCTION_PARTS, type InstructionCounts, perCall, readDump } from './callgrind.js';
import { type RunEnvironment, runEnvironment, writeJson, writeMarkdownSection } from './docs.js';
import { readWhole } from './load.js';
import type { BenchOptions } from './options.js';
import { type BenchChild, startNode } from './processes.js';
import { type BenchRequest, buildScenarios } from './scenarios.js';
import { count, markdownTable, textTable } from './table.js';
import { buildDist, issueKey, prepareTargets } from './targets.js';
import { makeWorkDir, removeWorkDir } from './work-dir.js';

const VALGRIND_MISSING = 'valgrind not found: the instruction counts need it (apt-get install valgrind)';
// Under valgrind a process starts in tens of seconds, not one.
const START_TIMEOUT_MS = 300_000;

interface InstructionScenario {
  name: string;
  connections: number;
  floor: BenchRequest;
  gateway: BenchRequest;
}

interface TargetCount {
  /** Thousands of instructions per call, the compilers' and the full collections' left out: the median run's. */
  kInstructionsPerCall: number;
  /** The same by part, of the median run (the compilers and the full collections too, apart). */
  kByPart: InstructionCounts;
  /** The lowest and highest of the counted runs. */
  kRange: [number, number];
}

interface InstructionResults {
  environment: RunEnvironment;
  settings: { warmupCalls: number; calls: number; repeats: number; idleSeconds: number; valgrind: string };
  scenarios: Record<string, { connections: number; floor: TargetCount; gateway: TargetCount; gatewayToFloor: number }>;
}

/** The default scenarios' calls at the connections counted here (fewer than timed: valgrind runs one thread at a time). */
function instructionScenarios(gatewayKey: string): InstructionScenario[] {
  const { defaults } = buildScenarios(gatewayKey);
  const byName = new Map(defaults.map((s) => [s.name, s]));
  const pick = (from: string, name: string, connections: number): InstructionScenario => {
    const s = byName.get(from);
    if (!s) throw new Error(`no default scenario ${from}`);
    return { name, connections, floor: s.upstream, gateway: s.gateway };
  };
  return [
    pick('chat-plain-c1', 'chat-plain-c1', 1),
    pick('chat-plain-c50', 'chat-plain-c8', 8),
    pick('chat-stream-200w-c50', 'chat-stream-200w-c8', 8),
    pick('speech-stream-c50', 'speech-stream-c8', 8),
  ];
}

/** `calls` calls over `connections` connections, each answer read whole and checked. */
async function callMany(url: string, request: BenchRequest, calls: number, connections: number, broken: Promise<never>) {
  const pool = new Pool(url, { connections, keepAliveTimeout: 600_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  let left = calls;
  const worker = async () => {
    while (left > 0) {
      left -= 1;
      await readWhole(pool, request);
    }
  };
  try {
    await Promise.race([Promise.all(Array.from({ length: connections }, worker)), broken]);
  } finally {
    await pool.destroy();
  }
}

/** One target under callgrind, counted scenario by scenario: each dump is numbered after the last. */
class CountedProcess {
  private dumps = 0;
  constructor(
    private readonly child: BenchChild,
    private readonly outFile: string,
  ) {}

  private control(...args: string[]) {
    execFileSync('callgrind_control', [...args, String(this.child.pid)], { stdio: 'ignore' });
  }

  /** Dumps the counts since the last dump and reads them. */
  private dump(): InstructionCounts {
    this.control('--dump');
    this.dumps += 1;
    return readDump(`${this.outFile}.${this.dumps}`);
  }

  async count(url: string, request: BenchRequest, connections: number, options: BenchOptions, interrupted: Promise<never>): Promise<TargetCount> {
    const broken = Promise.race([this.child.died, interrupted]);
    await callMany(url, request, options.instructionWarmupCalls, connections, broken);
    this.control('--instr=on');
    const idleMs = options.instructionIdleSeconds * 1000;
    await Promise.race([new Promise((resolve) => setTimeout(resolve, idleMs)), broken]);
    const idle = this.dump();
    // Several counted runs, the median the figure: the state of V8's compiled code still moves a
    // run by a few per cent (its compilers are at work in some runs and not in others).
    const runs: { k: number; kByPart: InstructionCounts }[] = [];
    for (let run = 0; run < options.instructionRepeats; run++) {
      const startedAt = performance.now();
      await callMany(url, request, options.instructionCalls, connections, broken);
      const loadMs = performance.now() - startedAt;
      const each = perCall(idle, idleMs, this.dump(), loadMs, options.instructionCalls);
      const kByPart = emptyCounts();
      for (const part of INSTRUCTION_PARTS) kByPart[part] = Math.round(each[part] / 1000);
      runs.push({ k: Math.round(callInstructions(each) / 1000), kByPart });
    }
    this.control('--instr=off');
    runs.sort((a, b) => a.k - b.k);
    const median = runs[Math.floor((runs.length - 1) / 2)]!;
    return { kInstructionsPerCall: median.k, kByPart: median.kByPart, kRange: [runs[0]!.k, runs.at(-1)!.k] };
  }

  stop = () => this.child.stop();
}

function valgrindVersion(): string | undefined {
  const found = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

export async function runInstructionsBench(options: BenchOptions, interrupted: Promise<never>): Promise<number> {
  const valgrind = valgrindVersion();
  if (!valgrind) throw new Error(VALGRIND_MISSING);
  buildDist();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const environment = runEnvironment();
  const settings = {
    warmupCalls: options.instructionWarmupCalls,
    calls: options.instructionCalls,
    repeats: options.instructionRepeats,
    idleSeconds: options.instructionIdleSeconds,
    valgrind,
  };
  out(`tollroute instruction counts: ${describe(environment, settings)}`);
  const workDir = makeWorkDir();
  const started: { stop(): Promise<void> }[] = [];
  try {
    const files = await prepareTargets(workDir);
    const sandbox = await startNode('sandbox', [files.entry, 'sandbox', '--config', files.configFile]);
    started.push(sandbox);
    const underValgrind = (name: string) => {
      const outFile = path.join(workDir, `${name}.callgrind`);
      const prefix = ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${outFile}`];
      return { outFile, options: { prefix, startTimeoutMs: START_TIMEOUT_MS } };
    };

    const floorRun = underValgrind('floor');
    const floorChild = await startNode('bare proxy', [files.floorScript, String(files.ports.floor), String(files.ports.sandbox)], floorRun.options);
    const floor = new CountedProcess(floorChild, floorRun.outFile);
    started.push(floor);
    const gatewayRun = underValgrind('gateway');
    const gatewayChild = await startNode('gateway', [files.entry, 'serve', '--config', files.configFile], {
      ...gatewayRun.options,
      stdoutFile: path.join(workDir, 'gateway.log'),
    });
    const gateway = new CountedProcess(gatewayChild, gatewayRun.outFile);
    started.push(gateway);
    const gatewayKey = await issueKey(files.urls.gateway, files.adminToken);

    const chosen = instructionScenarios(gatewayKey).filter((s) => options.only.length === 0 || options.only.includes(s.name));
    if (chosen.length === 0) throw new Error(`no scenario named ${options.only.join(', ')}`);
    const results: InstructionResults = { environment, settings, scenarios: {} };
    for (const scenario of chosen) {
      const floorCount = await floor.count(files.urls.floor, scenario.floor, scenario.connections, options, interrupted);
      out(`  ${scenario.name} floor    ${count(floorCount.kInstructionsPerCall)} k instructions/call (runs ${floorCount.kRange.join('–')})`);
      const gatewayCount = await gateway.count(files.urls.gateway, scenario.gateway, scenario.connections, options, interrupted);
      out(`  ${scenario.name} gateway  ${count(gatewayCount.kInstructionsPerCall)} k instructions/call (runs ${gatewayCount.kRange.join('–')})`);
      results.scenarios[scenario.name] = {
        connections: scenario.connections,
        floor: floorCount,
        gateway: gatewayCount,
        gatewayToFloor: Number((gatewayCount.kInstructionsPerCall / floorCount.kInstructionsPerCall).toFixed(2)),
      };
    }

    out(`\n${instructionsTable(results, 'text')}`);
    out(`\nresults written to ${writeJson('instructions', results, options.writeDocs)}`);
    if (options.writeDocs) {
      const markdown = [`Run of ${describe(environment, settings)}.`, '', instructionsTable(results, 'markdown')].join('\n');
      out(`instruction counts written to ${writeMarkdownSection('instructions', markdown)}`);
    }
    return 0;
  } finally {
    await Promise.allSettled(started.reverse().map((child) => child.stop()));
    removeWorkDir(workDir);
  }
}

function describe(env: RunEnvironment, s: InstructionResults['settings']): string {
  return (
    `${env.date.slice(0, 10)}, code ${env.commit}, Node.js ${env.node}, ${env.platform}, ${s.valgrind} (callgrind); ` +
    `${count(s.warmupCalls)} calls of warm-up, then ${s.repeats ?? 1} counted runs of ${count(s.calls)} (the median shown), less ${s.idleSeconds} s of idle`
  );
}

function instructionsTable(results: InstructionResults, format: 'text' | 'markdown'): string {
  const headers = [
    'scenario',
    'target',
    'k instr/call',
    'runs',
    'JIT code',
    'V8 and Node',
    'SQLite',
    'libc',
    'other',
    '(compilers)',
    '(full GC)',
    'gateway ÷ floor',
  ];
  const rows: string[][] = [];
  for (const [name, s] of Object.entries(results.scenarios)) {
    for (const target of ['floor', 'gateway'] as const) {
      const c = s[target];
      const p = c.kByPart;
      rows.push([
        target === 'floor' ? name : '',
        target,
        count(c.kInstructionsPerCall),
        c.kRange ? `${count(c.kRange[0])}–${count(c.kRange[1])}` : '',
        count(p.jit),
        count(p.runtime),
        count(p.sqlite),
        count(p.libc),
        count(p.other),
        count(p.compiler),
        count(p.fullGc),
        target === 'gateway' ? `${s.gatewayToFloor.toFixed(2)}×` : '',
      ]);
    }
  }
  return format === 'markdown' ? markdownTable(headers, rows, 2) : textTable(headers, rows, 2);
}
