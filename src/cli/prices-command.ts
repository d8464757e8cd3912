// `tollroute prices draft`: the command and its options. The draft itself (src/cli/price-draft.ts)
// is loaded when it runs, so the rest of the command line starts without the package's price data.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { parseMarkup } from '../billing/price-draft.js';

const collect = (value: string, previous: string[]) => [
  ...previous,
  ...value
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean),
];

function parseMicrosPerUsd(value: string): bigint {
  if (!/^\d+$/.test(value) || BigInt(value) === 0n) throw new Error(`--micros-per-usd: expected a positive whole number, got "${value}"`);
  return BigInt(value);
}

function parseAt(value: string): Date {
  const at = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(at.getTime())) throw new Error(`--at: expected an ISO date such as 2026-01-31, got "${value}"`);
  return at;
}

/** A draft must not land on the configuration it is drafted for (or any tollroute.yaml). */
function refuseConfigOut(out: string, config: string | undefined): void {
  const target = path.resolve(out);
  if (path.basename(target) === 'tollroute.yaml' || (config !== undefined && target === path.resolve(config))) {
    throw new Error(`--out ${out}: a draft is never written over a configuration; write it elsewhere and paste what you keep`);
  }
}

interface CommandOptions {
  provider: string[];
  model?: string;
  markup: string;
  microsPerUsd: string;
  at?: string;
  out?: string;
}

export function pricesCommand(): Command {
  const prices = new Command('prices').description('model prices');
  prices
    .command('draft')
    .description(
      `draft a price list from @pydantic/genai-prices with your markup, as YAML to review (it never changes a price); with the global --config <tollroute.yaml>, only the models configured there`,
    )
    .addOption(new Option('--provider <id>', "the package's provider ids, repeated or comma-separated").argParser(collect).default([], 'every provider'))
    .option('--model <pattern>', 'only model ids matching this (* for any characters; without *, ids containing it)')
    .option('--markup <percent>', "percent above the provider's prices (negative for below, above -100)", '0')
    .option('--micros-per-usd <n>', 'micros of the balance per US dollar', '1000000')
    .option('--at <date>', 'price at this ISO date instead of today')
    .option('--out <file>', 'write the draft here instead of standard output')
    .action(async (opts: CommandOptions, command: Command) => {
      // --config is the program's own option, so it is read with the globals.
      const { config } = command.optsWithGlobals<{ config?: string }>();
      if (opts.out) refuseConfigOut(opts.out, config);
      // The package's price data is loaded only when a draft is asked for.
      const { priceDraftYaml } = await import('./price-draft.js');
      const yaml = await priceDraftYaml({
        providers: opts.provider,
        ...(opts.model !== undefined && { model: opts.model }),
        markup: parseMarkup(opts.markup),
        microsPerUsd: parseMicrosPerUsd(opts.microsPerUsd),
        at: opts.at === undefined ? new Date() : parseAt(opts.at),
        ...(config !== undefined && { config }),
      });
      if (opts.out) writeFileSync(opts.out, yaml);
      else process.stdout.write(yaml);
    });
  return prices;
}
