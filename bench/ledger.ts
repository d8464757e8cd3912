// The ledger micro-bench: hold+settle pairs per second straight on the store, no HTTP. Every call
// through the gateway does one such pair, so this is the most calls per second billing allows.
// Workers run holdFunds then settleHold in a loop, on random accounts ("spread") or all on one
// ("hot"); at the end every account's balance is checked against its ledger.
import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { checkAccountBalance, createAccount } from '../src/billing/accounts.js';
import { holdFunds, settleHold } from '../src/billing/ledger.js';
import type { Store } from '../src/store/open.js';
import { median, percentile } from './stats.js';

const CREDIT_MICROS = 1_000_000_000_000; // a million units an account: no hold in the run is refused
const HOLD_MICROS = 1_000;
const CHARGE_MICROS = 600;
/** The prices every pair is billed at, as a call's are: its usage row names the list (one row of price_lists). */
const PRICES = { input_token: 2_000_000, output_token: 8_000_000 };
const WARMUP_SECONDS = 1;
const ACCOUNTS_CREATED_AT_ONCE = 16;

export type LedgerVariant = 'spread' | 'hot';

export interface LedgerRun {
  pairs: number;
  errors: number;
  seconds: number;
  pairsPerSecond: number;
  pairMs: { p50: number; p99: number };
  /** CPU of this process (the store's client; for SQLite the store itself) per pair, in ms. */
  clientCpuMsPerPair: number;
}

export interface LedgerVariantResult {
  variant: LedgerVariant;
  pairsPerSecond: number;
  pairP50Ms: number;
  pairP99Ms: number;
  clientCpuMsPerPair: number;
  errors: number;
  firstError: string | null;
  runs: LedgerRun[];
}

export interface LedgerStoreResult {
  store: 'sqlite' | 'postgres';
  accounts: number;
  workers: number;
  variants: LedgerVariantResult[];
  /** Accounts whose balance and held funds equal the sums of their ledger rows, after the runs. */
  consistentAccounts: number;
}

export interface LedgerSettings {
  rounds: number;
  seconds: number;
  workers: number;
  accounts: number;
}

async function createAccounts(store: Store, total: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < total; i += ACCOUNTS_CREATED_AT_ONCE) {
    const batch = Array.from({ length: Math.min(ACCOUNTS_CREATED_AT_ONCE, total - i) }, (_, j) =>
      createAccount(store, { name: `bench-${i + j}`, creditMicros: CREDIT_MICROS }),
    );
    ids.push(...(await Promise.all(batch)).map((account) => account.id));
  }
  return ids;
}

/** `workers` loops of hold then settle for `seconds`; stops at once if `broken` rejects. */
async function runPairs(
  store: Store,
  pickAccount: () => string,
  seconds: number,
  workers: number,
  broken: Promise<never>,
): Promise<{ run: LedgerRun; firstError: string | null }> {
  const pairMs: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const deadline = startedAt + seconds * 1000;
  async function worker(): Promise<void> {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const requestId = `bench-${next++}`;
      try {
        const { holdId } = await holdFunds(store, { accountId: pickAccount(), amountMicros: HOLD_MICROS, requestId, model: 'bench-model', endpoint: 'bench' });
        await settleHold(store, holdId, { chargeMicros: CHARGE_MICROS, units: { input_token: 100, output_token: 50 }, prices: PRICES });
        pairMs.push(performance.now() - t0);
      } catch (error) {
        errors += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  }
  await Promise.race([Promise.all(Array.from({ length: workers }, worker)), broken]);
  const elapsed = (performance.now() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const sorted = pairMs.sort((a, b) => a - b);
  const pairs = sorted.length;
  const run: LedgerRun = {
    pairs,
    errors,
    seconds: elapsed,
    pairsPerSecond: pairs / elapsed,
    pairMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99) },
    clientCpuMsPerPair: pairs === 0 ? Number.NaN : (cpu.user + cpu.system) / 1000 / pairs,
  };
  return { run, firstError };
}

export async function benchLedger(
  name: 'sqlite' | 'postgres',
  store: Store,
  settings: LedgerSettings,
  broken: Promise<never>,
  progress: (line: string) => void,
): Promise<LedgerStoreResult> {
  progress(`  ${name}: creating ${settings.accounts} accounts…`);
  const accounts = await createAccounts(store, settings.accounts);
  const variants: LedgerVariantResult[] = [];
  for (const variant of ['spread', 'hot'] as const) {
    const pick = variant === 'hot' ? () => accounts[0]! : () => accounts[randomInt(accounts.length)]!;
    await runPairs(store, pick, WARMUP_SECONDS, settings.workers, broken);
    const runs: LedgerRun[] = [];
    let errors = 0;
    let firstError: string | null = null;
    for (let round = 1; round <= settings.rounds; round++) {
      const { run, firstError: first } = await runPairs(store, pick, settings.seconds, settings.workers, broken);
      runs.push(run);
      errors += run.errors;
      firstError ??= first;
      progress(
        `  ${name} ${variant} round ${round}/${settings.rounds}: ${run.pairsPerSecond.toFixed(0)} pairs/s, p50 ${run.pairMs.p50.toFixed(2)} ms, p99 ${run.pairMs.p99.toFixed(2)} ms` +
          (run.errors > 0 ? `, ${run.errors} errors (${first})` : ''),
      );
    }
    variants.push({
      variant,
      pairsPerSecond: median(runs.map((r) => r.pairsPerSecond)),
      pairP50Ms: median(runs.map((r) => r.pairMs.p50)),
      pairP99Ms: median(runs.map((r) => r.pairMs.p99)),
      clientCpuMsPerPair: median(runs.map((r) => r.clientCpuMsPerPair)),
      errors,
      firstError,
      runs,
    });
  }
  let consistentAccounts = 0;
  for (const id of accounts) if ((await checkAccountBalance(store, id)).consistent) consistentAccounts += 1;
  return { store: name, accounts: accounts.length, workers: settings.workers, variants, consistentAccounts };
}
