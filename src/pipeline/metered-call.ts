// The metered call, written once for every endpoint:
// model → rate limit → estimate → HOLD → upstream → answer → SETTLE on real usage, or RELEASE.
import { finished, type Readable } from 'node:stream';
import type { ModelConfig } from '../config/schema.js';
import { clientClosed, GatewayError, rateLimited, upstream as upstreamError } from '../errors.js';
import { holdFunds, releaseHold, settleHold } from '../billing/ledger.js';
import { priceMicros, usableUnits, type Units } from '../billing/prices.js';
import type { RateLimiter } from '../limits/index.js';
import type { Store } from '../store/open.js';
import type { Catalogue } from './catalogue.js';
import type { MeteredAnswer, MeteredEndpoint, MeteredRequest, ResolvedModel } from './types.js';

export interface PipelineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface PipelineMetrics {
  observeUpstream(labels: { model: string; channel: string; outcome: string }, seconds: number): void;
  addBilled(model: string, micros: number): void;
}

export interface PipelineDeps {
  store: Store;
  catalogue: Catalogue;
  limiter: RateLimiter;
  defaultRpm: number;
  metrics: PipelineMetrics;
  /** The longest a metered call may run, streams included; past it the upstream call is stopped. */
  callTimeoutMs: number;
}

export interface Pipeline {
  run<Body>(endpoint: MeteredEndpoint<Body>, request: MeteredRequest<Body>, log: PipelineLogger): Promise<MeteredAnswer>;
  /** Rate limit alone, for endpoints that charge nothing (reads of task records). */
  admit(caller: MeteredRequest<unknown>['caller'], log: PipelineLogger): Promise<void>;
  /** Resolves when every settlement already started has been written (for shutdown). */
  settled(): Promise<void>;
  catalogue: Catalogue;
  callTimeoutMs: number;
}

/**
 * Resolves once the stream has data to read; rejects if it fails or ends empty first (an empty
 * 200 delivered nothing, so it is a failed call, not a billable one).
 */
function firstData(body: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      body.off('readable', onReadable);
      body.off('error', done);
      if (error) reject(error);
      else resolve();
    };
    // 'readable' fires when data is buffered, or at the end: nothing buffered then means empty.
    const onReadable = () => done(body.readableLength > 0 ? undefined : new Error('the upstream stream ended without data'));
    body.on('readable', onReadable);
    body.once('error', done);
  });
}

/** The call's own deadline (AbortSignal.timeout), as against a client that left. */
const isDeadline = (reason: unknown) => reason instanceof DOMException && reason.name === 'TimeoutError';

export const holdFor = (model: ModelConfig, estimate: Units) => model.hold_micros ?? priceMicros(estimate, model.price);

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { store, catalogue, limiter, metrics } = deps;
  const pendingSettlements = new Set<Promise<void>>();

  async function admit(caller: MeteredRequest<unknown>['caller'], log: PipelineLogger) {
    let allowed: boolean;
    try {
      allowed = await limiter.take(caller.keyId, caller.rpm ?? deps.defaultRpm);
    } catch (error) {
      // Fail open: an unreachable limiter must not take the whole gateway down with it.
      log.error({ err: error }, 'rate limiter unavailable; request admitted');
      allowed = true;
    }
    if (!allowed) throw rateLimited();
  }

  /** Settles on what the upstream reported, made safe to price; never throws (billing must not break an answer). */
  async function settle(model: ResolvedModel, holdId: string, readUnits: () => Units, estimate: Units, requestId: string, log: PipelineLogger) {
    try {
      const units = usableUnits(readUnits(), estimate);
      const chargeMicros = priceMicros(units, model.config.price);
      const outcome = await settleHold(store, holdId, { chargeMicros, units, requestId });
      if (outcome.applied) metrics.addBilled(model.id, chargeMicros);
      log.info({ holdId, units, chargeMicros, model: model.id, applied: outcome.applied }, 'hold settled');
    } catch (error) {
      // The hold stays open; the recovery sweep ends it.
      log.error({ err: error, holdId }, 'settling the hold failed');
    }
  }

  async function release(holdId: string, reason: string, log: PipelineLogger) {
    try {
      await releaseHold(store, holdId, { note: reason });
      log.info({ holdId, reason }, 'hold released');
    } catch (error) {
      log.error({ err: error, holdId }, 'releasing the hold failed');
    }
  }

  async function run<Body>(endpoint: MeteredEndpoint<Body>, request: MeteredRequest<Body>, log: PipelineLogger): Promise<MeteredAnswer> {
    const model = catalogue.resolve(request.modelId, endpoint.modelType);
    await admit(request.caller, log);

    const estimate = endpoint.estimate(request.body, model);
    const hold = await holdFunds(store, {
      accountId: request.caller.accountId,
      keyId: request.caller.keyId,
      amountMicros: holdFor(model.config, estimate),
      requestId: request.requestId,
      model: model.id,
      endpoint: endpoint.endpoint,
    });

    const startedAt = performance.now();
    const upstreamLabels = (outcome: string) => ({ model: model.id, channel: model.upstream.name, outcome });
    let answer: MeteredAnswer;
    try {
      answer = await endpoint.call({ body: request.body, model, estimate, signal: request.signal });
      // A stream that breaks before its first byte is a failed call: the client gets a 502, not a 200 cut short.
      if (answer.kind === 'stream') await firstData(answer.body);
    } catch (error) {
      const clientLeft = request.signal.aborted && !isDeadline(request.signal.reason);
      metrics.observeUpstream(upstreamLabels(clientLeft ? 'client_gone' : 'error'), (performance.now() - startedAt) / 1000);
      if (clientLeft) {
        // The caller left while the upstream worked: nothing was seen, so the estimate is the bill
        // (DESIGN section 5: never a silent zero, or leaving early would be a way not to pay).
        await settle(model, hold.holdId, () => estimate, estimate, request.requestId, log);
        throw clientClosed();
      }
      // release, not settle: the upstream failed (or overran the call deadline) and produced nothing we could bill
      await release(hold.holdId, 'upstream failed', log);
      if (error instanceof GatewayError) throw error;
      log.warn({ err: error, model: model.id }, 'upstream call failed');
      throw upstreamError(error);
    }

    if (answer.kind === 'json') {
      metrics.observeUpstream(upstreamLabels('ok'), (performance.now() - startedAt) / 1000);
      await settle(model, hold.holdId, () => answer.units, estimate, request.requestId, log);
      return answer;
    }

    // A stream is billed when it ends in any way: completed, broken upstream, or client gone.
    finished(answer.body, (error) => {
      metrics.observeUpstream(upstreamLabels(error ? 'interrupted' : 'ok'), (performance.now() - startedAt) / 1000);
      if (error) log.warn({ err: error, holdId: hold.holdId }, 'stream ended early; billing what was generated');
      let units: Units | undefined;
      try {
        units = answer.units();
      } catch (unitsError) {
        log.error({ err: unitsError, holdId: hold.holdId }, 'reading the stream usage failed; billing the estimate');
        units = estimate;
      }
      const settling = units
        ? settle(model, hold.holdId, () => units, estimate, request.requestId, log)
        : release(hold.holdId, 'upstream failed before any output', log);
      pendingSettlements.add(settling);
      void settling.finally(() => pendingSettlements.delete(settling));
    });
    return answer;
  }

  return { run, admit, catalogue, callTimeoutMs: deps.callTimeoutMs, settled: async () => void (await Promise.allSettled([...pendingSettlements])) };
}
