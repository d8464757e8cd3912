// Runs cells on a few workers (a gateway and its sandbox each: fault rules are global to a sandbox,
// so a worker runs one cell at a time), and prints the table of families × faults.
import type { TestGateway } from '../../helpers/gateway.js';
import { healthy } from './calls.js';
import { CHAT_FAMILIES } from './chat-families.js';
import { COMPLETIONS_FAMILIES } from './completions-families.js';
import { EMBEDDINGS_FAMILIES } from './embeddings-family.js';
import { IMAGES_SYNC_FAMILIES } from './images-sync-family.js';
import { CALLERS, type Caller, type Cell, cellName, FAULT_NAMES, FAULTS, type Family, type Fault } from './matrix.js';
import { checkMoney, freshAccount, moneyBefore } from './money.js';
import { SYNC_FAMILIES } from './sync-families.js';
import { TASK_FAMILIES } from './task-families.js';
import { TRANSCRIPTION_FAMILIES } from './transcriptions-family.js';

export const FAMILIES: readonly Family[] = [
  ...CHAT_FAMILIES,
  ...COMPLETIONS_FAMILIES,
  ...SYNC_FAMILIES,
  ...EMBEDDINGS_FAMILIES,
  ...IMAGES_SYNC_FAMILIES,
  ...TASK_FAMILIES,
  ...TRANSCRIPTION_FAMILIES,
];

/** A cell's outcome, as plain data: a shard process sends it to the test. */
export interface CellResult {
  family: string;
  fault: Fault;
  caller: Caller;
  outcome: 'passed' | 'failed' | 'not applicable';
  reason?: string;
  ms: number;
}

const CREDIT_MICROS = 10_000_000;
/** Past this a cell is failed (the slowest, a hung generation tried three times, takes about 6 s). */
const CELL_TIMEOUT_MS = 30_000;

/** Every cell: those that apply (the slow ones first, so workers finish together) and those that do not, with why. */
export function planCells(): { runnable: Cell[]; notApplicable: CellResult[] } {
  const all = FAMILIES.flatMap((family) => FAULTS.flatMap((fault) => CALLERS.map((caller): Cell => ({ family, fault, caller }))));
  const notApplicable = all.flatMap((cell) => {
    const reason = cell.family.notApplicable(cell.fault);
    return reason ? [{ family: cell.family.name, fault: cell.fault, caller: cell.caller, outcome: 'not applicable' as const, reason, ms: 0 }] : [];
  });
  const runnable = all.filter((cell) => !cell.family.notApplicable(cell.fault));
  const slow = (cell: Cell) => cell.family.slow?.(cell.fault) === true;
  return { runnable: [...runnable.filter(slow), ...runnable.filter((cell) => !slow(cell))], notApplicable };
}

async function runCell(gw: TestGateway, cell: Cell): Promise<void> {
  await gw.sandboxControl('DELETE', '/__sandbox/faults');
  await gw.sandboxControl('DELETE', '/__sandbox/requests');
  const { accountId, key } = await gw.account({ creditMicros: CREDIT_MICROS });
  const ctx = { gw, accountId, key, fault: cell.fault, caller: cell.caller };
  const prepared = cell.family.prepare ? await cell.family.prepare(ctx) : {};
  await gw.sandboxControl('DELETE', '/__sandbox/requests'); // only the cell's own upstream requests are counted
  const before = cell.family.prepare ? await moneyBefore(gw, accountId) : freshAccount(CREDIT_MICROS);
  const rule = await cell.family.run(ctx, prepared);
  await checkMoney(gw, accountId, before, rule);
  await healthy(gw);
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the cell did not finish in ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export async function runCells(cells: Cell[], workers: TestGateway[]): Promise<CellResult[]> {
  const results: CellResult[] = [];
  const queue = [...cells];
  await Promise.all(
    workers.map(async (gw) => {
      for (let cell = queue.shift(); cell; cell = queue.shift()) {
        const startedAt = Date.now();
        const result = { family: cell.family.name, fault: cell.fault, caller: cell.caller };
        try {
          await withTimeout(runCell(gw, cell), CELL_TIMEOUT_MS);
          results.push({ ...result, outcome: 'passed', ms: Date.now() - startedAt });
        } catch (error) {
          results.push({ ...result, outcome: 'failed', reason: (error as Error).message, ms: Date.now() - startedAt });
        }
      }
    }),
  );
  return results;
}

/** Families × faults, each entry `waits/leaves`: ok, FAIL, or N/A. */
export function matrixTable(results: CellResult[]): string {
  const entry = (family: string, fault: Fault) => {
    const of = CALLERS.map((caller) => results.find((r) => r.family === family && r.fault === fault && r.caller === caller));
    if (of.every((r) => r?.outcome === 'not applicable')) return 'N/A';
    return of.map((r) => (r?.outcome === 'passed' ? 'ok' : r ? 'FAIL' : 'not run')).join('/');
  };
  const header = `| family (waits/leaves) | ${FAULTS.map((fault) => FAULT_NAMES[fault]).join(' | ')} |`;
  const rule = `|---|${FAULTS.map(() => '---').join('|')}|`;
  const rows = FAMILIES.map(({ name }) => `| ${name} | ${FAULTS.map((fault) => entry(name, fault)).join(' | ')} |`);
  return [header, rule, ...rows].join('\n');
}

export function failureList(results: CellResult[]): string[] {
  return results.filter((r) => r.outcome === 'failed').map((r) => `${cellName({ family: { name: r.family }, fault: r.fault, caller: r.caller })}: ${r.reason}`);
}
