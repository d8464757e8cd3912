// One call's hold, ended exactly once whichever way of ending gets there first: priced from its
// bill, handed to the settlements (which keep an end the store refuses and retry it), and its fields
// added to the request's log line. The pipeline (metered-call.ts) makes one per call.
import type { Units } from '../billing/prices.js';
import type { HoldEnd, Settlements } from '../billing/settlements.js';
import { type Bill, priceUsage } from './bill.js';
import type { HoldLogFields, MeteredRequest, ResolvedModel } from './types.js';

export interface PipelineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface PipelineMetrics {
  observeUpstream(labels: { model: string; channel: string; outcome: string }, seconds: number): void;
  addBilled(model: string, micros: number): void;
  addUnbilled(model: string, micros: number): void;
  countClamped(model: string): void;
  countUpstreamAuthFailure(channel: string): void;
}

/** One call's hold, ended once: `end` after the first returns the first end's promise. */
export interface HoldEnding {
  /** The end under way or done, once one has begun (set by `end` and `abandon` only). */
  underWay: Promise<void> | undefined;
  /** The channel's answer time (for a stream, to its first data), once known: kept on the usage row. */
  upstreamMs?: number;
  /** The channel (and key) that served, and the attempts it took, once one has: on the usage row and the log line. */
  servedBy?: { model: ResolvedModel; attempts: number };
  /** The gateway's own count of what the answer made, once there is one: billed for an upstream figure that is not sane. */
  counted?: () => Units;
  end(bill: Bill, outcome: string): Promise<void>;
  /** The hold was never written (its commit failed): there is nothing to end. */
  abandon(): void;
}

/** What the end of a hold knows of how the call was served. */
interface ServedCall {
  upstreamMs?: number;
  servedBy?: { model: ResolvedModel; attempts: number };
  counted?: () => Units;
}

export interface HoldEndings {
  /** The end of one call's hold; `startedAt` (performance.now()) times the upstream for the metrics. */
  holdEnding(model: ResolvedModel, holdId: string, estimate: Units, request: MeteredRequest<unknown>, log: PipelineLogger, startedAt: number): HoldEnding;
  /** Resolves when no end is under way any more (for shutdown): those begun meanwhile are waited for too. */
  settled(): Promise<void>;
}

export function holdEndings({ settlements, metrics }: { settlements: Settlements; metrics: PipelineMetrics }): HoldEndings {
  // Ends under way, and who waits for there to be none (shutdown): a count, not a set of their
  // promises, which took a promise more a call to forget each one.
  let endsUnderWay = 0;
  let waiting: (() => void)[] = [];
  const ended = () => {
    endsUnderWay -= 1;
    if (endsUnderWay > 0 || waiting.length === 0) return;
    const wake = waiting;
    waiting = [];
    for (const resolve of wake) resolve();
  };

  /** Ends the hold as `bill` says (a store that refuses keeps the end for a retry), counted while under way. */
  async function endHold(
    model: ResolvedModel,
    holdId: string,
    bill: Bill,
    estimate: Units,
    request: MeteredRequest<unknown>,
    log: PipelineLogger,
    served: ServedCall,
  ) {
    endsUnderWay += 1;
    try {
      const { upstreamMs, servedBy, counted } = served;
      const channel = servedBy?.model.upstream.name;
      const attempts = servedBy?.attempts;
      let job: HoldEnd;
      if (bill.kind === 'release') job = { kind: 'release', holdId, note: bill.reason };
      else {
        const priced = priceUsage(bill.units, estimate, model.config, counted);
        if (priced.flags.length > 0) {
          metrics.countClamped(model.id);
          log.warn({ holdId, model: model.id, reported: bill.units, used: priced.units }, 'usage figures out of bounds were clamped');
        }
        job = {
          kind: 'settle',
          holdId,
          model: model.id,
          chargeMicros: priced.chargeMicros,
          units: priced.units,
          requestId: request.requestId,
          flags: priced.flags,
          upstreamMs,
          channel,
          attempts,
          // The prices taken when the hold was made (call-price.ts): named on the usage row.
          prices: model.config.price,
        };
      }
      const outcome = await settlements.end(job);
      // One literal, its fields absent rather than spread in: no temporary objects per call
      const fields: HoldLogFields = {
        holdId,
        model: model.id,
        bill: bill.kind,
        reason: bill.reason,
        units: job.kind === 'settle' ? job.units : undefined,
        chargeMicros: job.kind === 'settle' ? job.chargeMicros : undefined,
        channel,
        channelKey: servedBy ? (servedBy.model.upstream.keyId ?? undefined) : undefined,
        attempts,
        landed: outcome !== undefined,
      };
      if (!request.addToLogLine?.(fields)) log.info(fields, `hold ${bill.kind === 'settle' ? 'settled' : 'released'}`);
    } finally {
      ended();
    }
  }

  const observeUpstream = (model: ResolvedModel, outcome: string, startedAt: number) =>
    metrics.observeUpstream({ model: model.id, channel: model.upstream.name, outcome }, (performance.now() - startedAt) / 1000);

  /** Ends one call's hold exactly once, whichever way of ending gets there first. */
  function holdEnding(
    model: ResolvedModel,
    holdId: string,
    estimate: Units,
    request: MeteredRequest<unknown>,
    log: PipelineLogger,
    startedAt: number,
  ): HoldEnding {
    // Data properties only: a getter in an object literal puts every such object in dictionary mode
    // (a hidden class of its own per call), which the young collector then promotes with the call.
    return {
      underWay: undefined,
      upstreamMs: undefined,
      servedBy: undefined,
      counted: undefined,
      end(bill, outcome) {
        if (this.underWay) return this.underWay;
        observeUpstream(this.servedBy?.model ?? model, outcome, startedAt);
        const ending = endHold(model, holdId, bill, estimate, request, log, this);
        this.underWay = ending;
        return ending;
      },
      abandon() {
        this.underWay ??= Promise.resolve();
      },
    };
  }

  return {
    holdEnding,
    settled: () => (endsUnderWay === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
  };
}
