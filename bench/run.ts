// `npm run bench`: the gateway measured against the sandbox called directly and through a bare
// Node.js proxy (the floor), in the same run, reported as differences and ratios to those, never
// as absolute pass/fail timings. The other modes (sweep, ledger, slow streams, hot account,
// compare) are listed by `--help`; docs/benchmarks.md describes each.
import { runCompareBench } from './compare.js';
import { runHotAccountBench } from './hot-account.js';
import { runHttpBench } from './http-bench.js';
import { runLedgerBench } from './ledger-bench.js';
import { parseOptions, USAGE } from './options.js';
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
    if (options.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (options.ledger) return await runLedgerBench(options, interrupted);
    if (options.slowStreams) return await runSlowStreamsBench(options, interrupted);
    if (options.hotAccount) return await runHotAccountBench(options, interrupted);
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
