// `npm run bench`: the gateway measured against the sandbox called directly and through a bare
// Node.js proxy (the floor), in the same run, reported as differences and ratios to those, never
// as absolute pass/fail timings. `--sweep` runs the scenarios of "How cost grows" instead, and
// `--ledger` the store micro-bench, `--slow-streams` many slow streams at once, `--hot-account` one
// account billed by two gateways on PostgreSQL, `--instructions` each call's instructions under
// valgrind, `--relays` plain chat through two minimal JSON relays beside the floor and the gateway,
// `--parts` the Fastify relay and the gateway profiled part by part, `--perf` the billed relay and the
// gateway sampled by Linux perf, `--compare <ref>` the working
// tree's gateway against a commit's. See docs/benchmarks.md.
import { runCompareBench } from './compare.js';
import { runHotAccountBench } from './hot-account.js';
import { runHttpBench } from './http-bench.js';
import { runInstructionsBench } from './instructions.js';
import { runLedgerBench } from './ledger-bench.js';
import { parseOptions } from './options.js';
import { runPartsBench } from './parts.js';
import { runPerfPartsBench } from './perf-parts.js';
import { runRelaysBench } from './relays.js';
import { runSlowStreamsBench } from './slow-streams.js';

async function main(): Promise<number> {
  // Interrupted: the running phase stops at once, and the processes are stopped on the way out.
  let interruptedBy: string | undefined;
  const interrupted = new Promise<never>((_, reject) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        interruptedBy ??= signal;
        reject(new Error(`interrupted by ${signal}`));
      });
    }
  });
  interrupted.catch(() => {});

  try {
    const options = parseOptions(process.argv.slice(2));
    if (options.ledger) return await runLedgerBench(options, interrupted);
    if (options.slowStreams) return await runSlowStreamsBench(options, interrupted);
    if (options.hotAccount) return await runHotAccountBench(options, interrupted);
    if (options.instructions) return await runInstructionsBench(options, interrupted);
    if (options.relays) return await runRelaysBench(options, interrupted);
    if (options.parts) return await runPartsBench(options, interrupted);
    if (options.perf) return await runPerfPartsBench(options, interrupted);
    if (options.compare) return await runCompareBench(options, interrupted);
    return await runHttpBench(options, interrupted);
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    return interruptedBy ? 130 : 1;
  }
}

process.exitCode = await main();
// Pools and timers left by an interrupted phase must not keep the process alive.
process.exit();
