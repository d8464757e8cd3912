// Reading valgrind's callgrind dumps: a process's instructions, split by where they ran. Pure
// parsing here; instructions.ts drives the processes.
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';

/**
 * - jit: JavaScript compiled by V8 (code callgrind finds in no file)
 * - runtime: the node binary itself: V8's builtins, runtime and garbage collector, libuv, Node's C++
 * - sqlite: better-sqlite3's addon, SQLite included
 * - libc: the C library (malloc, memcpy, the system-call stubs)
 * - compiler: V8's optimizing compilers, which a long-running process pays once; under valgrind's
 *   slowdown they are still at work long after the warm-up, so they are counted apart
 * - fullGc: V8's full collections (marking, sweeping, compacting), which come once every so many
 *   megabytes promoted: a counted run holds none or one, so they are counted apart too (the
 *   scavenges of the young generation, every few hundred calls, stay in `runtime`)
 * - other: everything else (libstdc++, the dynamic loader)
 */
export const INSTRUCTION_PARTS = ['jit', 'runtime', 'sqlite', 'libc', 'compiler', 'fullGc', 'other'] as const;
export type InstructionPart = (typeof INSTRUCTION_PARTS)[number];
export type InstructionCounts = Record<InstructionPart, number>;

// "  37,028,578 ( 2.38%)  ???:sqlite3VdbeExec [/path/better_sqlite3.node]": self cost, function, object
const FUNCTION_LINE = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)(?:\s+\[([^\]]*)\])?\s*$/;
const COMPILER_SYMBOL = /\bv8::internal::(compiler|maglev|turboshaft)::/;
const FULL_GC_SYMBOL = /Mark(ing|Compact)|Sweep|Evacuat|Compaction/;
const SCAVENGER_SYMBOL = /Scaveng/; // the young generation's collector evacuates objects too
/** Left out of a call's count: paid once, or in lumps a counted run may or may not hold. */
const APART: readonly InstructionPart[] = ['compiler', 'fullGc'];

export function emptyCounts(): InstructionCounts {
  return { jit: 0, runtime: 0, sqlite: 0, libc: 0, compiler: 0, fullGc: 0, other: 0 };
}

/** Which part one function's line belongs to. */
export function partOf(symbol: string, object: string | undefined, nodeBinary: string): InstructionPart {
  if (object === '???') return 'jit';
  if (object?.includes('better_sqlite3')) return 'sqlite';
  if (object && /\/libc\.so/.test(object)) return 'libc';
  if (object !== nodeBinary) return 'other';
  if (COMPILER_SYMBOL.test(symbol)) return 'compiler';
  return FULL_GC_SYMBOL.test(symbol) && !SCAVENGER_SYMBOL.test(symbol) ? 'fullGc' : 'runtime';
}

/** Sums `callgrind_annotate --auto=no --threshold=100` output (every function's own cost) by part. */
export function countsByPart(annotated: string, nodeBinary: string): InstructionCounts {
  const counts = emptyCounts();
  for (const line of annotated.split('\n')) {
    if (line.includes('PROGRAM TOTALS')) continue;
    const match = FUNCTION_LINE.exec(line);
    if (!match) continue;
    counts[partOf(match[2]!, match[3], nodeBinary)] += Number(match[1]!.replaceAll(',', ''));
  }
  return counts;
}

/** One dump file of callgrind's, by part. */
export function readDump(file: string): InstructionCounts {
  const annotated = execFileSync('callgrind_annotate', ['--auto=no', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  return countsByPart(annotated, realpathSync(process.execPath));
}

/**
 * Instructions per call of a loaded run, less what the process does idle in as long (its timers:
 * under valgrind a run lasts some fifty times longer than it would, so its timers would otherwise
 * be counted fifty times over).
 */
export function perCall(idle: InstructionCounts, idleMs: number, load: InstructionCounts, loadMs: number, calls: number): InstructionCounts {
  const out = emptyCounts();
  for (const part of INSTRUCTION_PARTS) out[part] = Math.max(0, (load[part] - (idle[part] * loadMs) / idleMs) / calls);
  return out;
}

/** The instructions a call costs, the compilers' and the full collections' left out. */
export const callInstructions = (counts: InstructionCounts) => INSTRUCTION_PARTS.reduce((sum, part) => (APART.includes(part) ? sum : sum + counts[part]), 0);
