// Ending holds so that no settle is ever lost (DESIGN §3): each end is tried at once; when the
// store refuses it, the job is appended to a journal file and kept in memory, and retried with
// backoff until it lands, even once another instance's sweep has released the hold meanwhile
// (late-settle.ts). A restart replays the journal before serving. The hold's exactly-once gate
// (closeHold) makes a replay of an end that did land harmless.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { StoreHealth } from '../store/health.js';
import { UnwrittenHoldError } from '../store/hot-ledger/types.js';
import type { Store } from '../store/open.js';
import { settleReleasedHold } from './late-settle.js';
import { releaseHold, type SettleOptions, type SettleOutcome, settleHold } from './ledger.js';

export type HoldEnd =
  /** A settle is the ledger's settle options, named with its hold and model (the metrics' label). */
  ({ kind: 'settle'; holdId: string; model: string } & Omit<SettleOptions, 'now'>) | { kind: 'release'; holdId: string; note: string };

export interface SettlementLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface SettlementMetrics {
  addBilled(model: string, micros: number): void;
  addUnbilled(model: string, micros: number): void;
}

export interface Settlements {
  /**
   * Ends the hold now; undefined when the store refused and the end was kept for a retry. Rejects
   * with UnwrittenHoldError for a hold decided in memory that could not be written with its settle:
   * nothing was held, so there is nothing to keep.
   */
  end(job: HoldEnd): Promise<SettleOutcome | { applied: boolean } | undefined>;
  /** Ends that are waiting for the store. */
  pending(): number;
  /** Retries the waiting ends now (the store just took a write again). */
  retryNow(): void;
  /** Applies the ends a previous run journaled and could not write. */
  replayJournal(): Promise<number>;
  /** Resolves once nothing waits, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
  stop(): void;
}

const MAX_RETRY_MS = 30_000;

export function createSettlements(deps: {
  store: Store;
  health: StoreHealth;
  journalPath: string;
  firstRetryMs: number;
  metrics: SettlementMetrics;
  log: SettlementLogger;
}): Settlements {
  const { store, health, log } = deps;
  const waiting = new Map<string, HoldEnd>();
  let retryMs = deps.firstRetryMs;
  let timer: NodeJS.Timeout | undefined;
  let retrying: Promise<void> | undefined;

  async function apply(job: HoldEnd) {
    if (job.kind === 'release') return releaseHold(store, job.holdId, { note: job.note });
    // The job is the settle's options with its hold and model beside them (no copy without those two)
    let outcome = await settleHold(store, job.holdId, job);
    // Not open: settled by an earlier try that landed unheard (nothing to do), or released by
    // another instance's sweep while this one was cut off from the store: the call was answered, so
    // it is billed still (late-settle.ts).
    if (!outcome.applied) {
      const late = await settleReleasedHold(store, job.holdId, job);
      if (late.applied) {
        log.warn({ holdId: job.holdId, chargedMicros: late.chargedMicros }, 'a settle landed after the recovery sweep had released its hold; charged now');
        outcome = late;
      }
    }
    if (outcome.applied) {
      deps.metrics.addBilled(job.model, outcome.chargedMicros);
      if (outcome.unbilledMicros > 0) {
        deps.metrics.addUnbilled(job.model, outcome.unbilledMicros);
        log.warn({ holdId: job.holdId, model: job.model, unbilledMicros: outcome.unbilledMicros }, 'usage beyond the hold and overdraft: recorded as unbilled');
      }
    }
    return outcome;
  }

  function journal(job: HoldEnd) {
    try {
      mkdirSync(dirname(deps.journalPath), { recursive: true });
      appendFileSync(deps.journalPath, `${JSON.stringify(job)}\n`);
    } catch (error) {
      // The same disk may be full: the job still waits in memory, and a crash falls back to the
      // progress the hold recorded (DESIGN §3).
      log.error({ err: error, holdId: job.holdId }, 'could not journal a pending settlement');
    }
  }

  function rewriteJournal() {
    try {
      writeFileSync(deps.journalPath, [...waiting.values()].map((job) => `${JSON.stringify(job)}\n`).join(''));
    } catch (error) {
      log.error({ err: error }, 'could not rewrite the settlement journal');
    }
  }

  function schedule() {
    if (timer || waiting.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void retryAll();
    }, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  }

  function retryAll(): Promise<void> {
    retrying ??= (async () => {
      for (const [holdId, job] of waiting) {
        try {
          await apply(job);
          waiting.delete(holdId);
          health.recovered();
          log.info({ holdId, kind: job.kind }, 'a pending settlement landed');
        } catch (error) {
          health.failed(error);
          break; // the store still refuses: wait, then try again from here
        }
      }
      rewriteJournal();
      if (waiting.size === 0) retryMs = deps.firstRetryMs;
    })().finally(() => {
      retrying = undefined;
      schedule();
    });
    return retrying;
  }

  return {
    async end(job) {
      try {
        return await apply(job);
      } catch (error) {
        if (error instanceof UnwrittenHoldError) {
          health.failed(error.cause);
          throw error;
        }
        health.failed(error);
        log.error({ err: error, holdId: job.holdId, kind: job.kind }, 'ending a hold failed; kept and retried until it lands');
        waiting.set(job.holdId, job);
        journal(job);
        schedule();
        return undefined;
      }
    },
    pending: () => waiting.size,
    retryNow() {
      if (waiting.size === 0) return;
      if (timer) clearTimeout(timer);
      timer = undefined;
      void retryAll();
    },
    async replayJournal() {
      let text: string;
      try {
        text = readFileSync(deps.journalPath, 'utf8');
      } catch {
        return 0; // no journal: nothing was left over
      }
      let replayed = 0;
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        let job: HoldEnd;
        try {
          job = JSON.parse(line) as HoldEnd;
        } catch {
          log.error({ line: line.slice(0, 200) }, 'skipping an unreadable settlement journal line');
          continue;
        }
        waiting.set(job.holdId, job);
        replayed += 1;
      }
      if (replayed > 0) {
        log.info({ replayed }, 'replaying settlements a previous run could not write');
        await retryAll();
      } else rewriteJournal();
      return replayed;
    },
    async drain(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (waiting.size > 0 && Date.now() < deadline) {
        await retryAll();
        if (waiting.size > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(200, timeoutMs)));
      }
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
