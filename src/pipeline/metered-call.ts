// The metered call, written once for every endpoint:
// model → rate limit → estimate → HOLD → upstream → answer → SETTLE on real usage, or RELEASE.
import { requireModelAllowed } from '../billing/key-limits.js';
import { type HeldAtOnce, type HoldRequest, holdFundsAtOnce } from '../billing/ledger.js';
import type { PriceBook } from '../billing/price-book.js';
import { holdMicros, type Units } from '../billing/prices.js';
import type { ProgressRecorder } from '../billing/progress.js';
import type { Settlements } from '../billing/settlements.js';
import type { ModelConfig } from '../config/schema.js';
import { billing, clientClosed, GatewayError, noChannelAvailable, rateLimited, unavailable, upstream as upstreamError } from '../errors.js';
import type { RateLimiter, Take } from '../limits/index.js';
import { callWithFailover, type FailedAttempt, NoChannelAvailableError, type Served } from '../routing/failover.js';
import type { RouteHealth } from '../routing/health.js';
import type { Attempt, Planner } from '../routing/plan.js';
import type { StoreHealth } from '../store/health.js';
import { UnwrittenHoldError } from '../store/hot-ledger/types.js';
import type { Store } from '../store/open.js';
import { made, unansweredBill } from './bill.js';
import { pricedForCall } from './call-price.js';
import { callerLeft } from './caller-left.js';
import type { Catalogue } from './catalogue.js';
import { firstData, holdCommitted } from './first-answer.js';
import { holdEndings, type PipelineLogger, type PipelineMetrics } from './hold-ending.js';
import { holdWithLoweredCap } from './output-cap.js';
import { refusalOf } from './refusals.js';
import { meterStream } from './stream-metering.js';
import type { MeteredAnswer, MeteredEndpoint, MeteredRequest, ResolvedModel, StreamMeter } from './types.js';

export type { PipelineLogger, PipelineMetrics } from './hold-ending.js';

export interface PipelineDeps {
  store: Store;
  catalogue: Catalogue;
  /** Test keys' catalogue: the sandbox alone (routing/test-catalogue.ts). */
  testCatalogue: Catalogue;
  limiter: RateLimiter;
  defaultRpm: number;
  metrics: PipelineMetrics;
  health: StoreHealth;
  settlements: Settlements;
  progress: ProgressRecorder;
  /** This process in the `instances` table: its holds are swept if it dies. */
  instanceId: string;
  /** The longest a metered call may run, streams included: past it the upstream call is stopped. */
  callTimeoutMs: number;
  /** Orders a model's channels per call, and the health that takes failing ones out (routing/). */
  routing: Routing;
  /** The prices each account pays: price changes and plans over the configured prices. */
  prices: PriceBook;
}

export interface Routing {
  plan: Planner;
  health: RouteHealth;
  /** The most (channel, key) attempts one call makes before its last failure is the answer. */
  maxAttempts: number;
}

export interface Pipeline {
  run<Body>(endpoint: MeteredEndpoint<Body>, request: MeteredRequest<Body>, log: PipelineLogger): Promise<MeteredAnswer>;
  /** Rate limit alone, for endpoints that charge nothing (reads of task records). */
  admit(caller: MeteredRequest<unknown>['caller'], log: PipelineLogger): Promise<void>;
  /** Refuses new work with 503 while the store cannot take writes. */
  requireWritableStore(): void;
  /** What the caller is told of a failed upstream call: a refusal of its own input as a 400, else a 502 (DESIGN §5). */
  upstreamFailure(error: unknown, model: ResolvedModel, log: PipelineLogger): GatewayError;
  /** Resolves when every settlement already started has been written (for shutdown). */
  settled(): Promise<void>;
  /** The live catalogue. */
  catalogue: Catalogue;
  /** The catalogue a caller's calls resolve in: a test key's, the test catalogue alone, whatever it names. */
  catalogueFor(livemode: boolean): Catalogue;
  callTimeoutMs: number;
  instanceId: string;
  /** The rate limit of a key without its own rpm. */
  defaultRpm: number;
  routing: Routing;
  prices: PriceBook;
}

const requireAllowed = (take: Take) => {
  if (!take.allowed) throw rateLimited({ retryAfterMs: take.retryAfterMs });
};

/**
 * What the caller is told when its hold, decided in memory, could not be written (so nothing of the
 * call may reach it, and nothing is charged): the store's failure (a 503), or a balance another
 * writer spent meanwhile (a 402).
 */
function unwrittenHoldAnswer(error: unknown): unknown {
  if (!(error instanceof UnwrittenHoldError)) return error;
  return error.cause ?? billing();
}

export const holdFor = (model: ModelConfig, estimate: Units) => model.hold_micros ?? holdMicros(estimate, model.price);

/** One warning per attempt that failed over to another, naming the channel, its key and why. */
const logFailedAttempt =
  (model: ResolvedModel, log: PipelineLogger) =>
  ({ channel, keyId, error, step }: FailedAttempt) => {
    const fields = { err: error, model: model.id, channel, channelKey: keyId ?? undefined };
    log.warn(fields, step.next === 'key' ? 'channel key failed; trying its next key' : 'channel failed; trying the next channel');
  };

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { store, catalogue, limiter, metrics, health, routing } = deps;
  const catalogueFor = (livemode: boolean) => (livemode ? catalogue : deps.testCatalogue);
  const { holdEnding, settled } = holdEndings(deps);

  // Never fails open: with Redis down the limiter decides from this instance's own buckets (limits/failover.ts).
  async function admit(caller: MeteredRequest<unknown>['caller'], _log: PipelineLogger) {
    requireAllowed(await limiter.take(caller.keyId, caller.rpm ?? deps.defaultRpm));
  }

  /** As admit, answered at once (undefined) when the limiter decides in this process alone. */
  function admitNow(caller: MeteredRequest<unknown>['caller'], log: PipelineLogger): Promise<void> | undefined {
    if (!limiter.takeNow) return admit(caller, log);
    requireAllowed(limiter.takeNow(caller.keyId, caller.rpm ?? deps.defaultRpm));
    return undefined;
  }

  function requireWritableStore() {
    if (!health.ok) throw unavailable('the gateway cannot record charges right now; retry shortly');
  }

  /**
   * What the caller is told of an upstream that failed: its refusal of the caller's own input as a
   * 400 with its reason, anything else a 502; logged here once, with the model and channel.
   */
  function upstreamFailure(error: unknown, model: ResolvedModel, log: PipelineLogger): GatewayError {
    if (error instanceof GatewayError) return error;
    if (error instanceof NoChannelAvailableError) {
      // An upstream failure to the caller (DESIGN §5): a 502 that says when to retry, a second when
      // no time is known (a probe still out, or every channel disabled by the operator).
      const retryAfterMs = error.retryAtMs === undefined ? 1_000 : error.retryAtMs - Date.now();
      log.warn({ model: model.id }, 'no channel of the model is available: all taken out by health or by the operator');
      return noChannelAvailable(model.id, retryAfterMs);
    }
    const failure = refusalOf(error, model, log, metrics) ?? upstreamError(error);
    log.warn({ err: error, model: model.id, channel: model.upstream.name }, 'upstream call failed');
    failure.logged = true;
    return failure;
  }

  /** The attempts along the call's plan; a planner that throws rejects them, so the hold is ended as for any failure. */
  function servedBy(model: ResolvedModel, attempt: (plan: Attempt[]) => Promise<Served<MeteredAnswer>>): Promise<Served<MeteredAnswer>> {
    let plan: Attempt[];
    try {
      plan = routing.plan(model.routes);
    } catch (error) {
      return Promise.reject(error);
    }
    return attempt(plan);
  }

  async function run<Body>(endpoint: MeteredEndpoint<Body>, request: MeteredRequest<Body>, log: PipelineLogger): Promise<MeteredAnswer> {
    requireWritableStore();
    // Before anything is held: a test key without a sandbox is refused here with a 503.
    const model = pricedForCall(catalogueFor(request.caller.livemode).resolve(request.modelId, endpoint.modelType), endpoint, request, deps.prices);
    requireModelAllowed(request.caller.limits, request.modelId, model.id);
    // A batch's lines are bounded by the runner's concurrency, not the key's per-minute limit.
    const admitting = endpoint.admitsBeforeBody || request.batchLine ? undefined : admitNow(request.caller, log);
    if (admitting) await admitting; // (no await when decided at once: an await of nothing still waits a turn)

    const estimating = endpoint.estimate(request.body, model);
    let estimate = estimating instanceof Promise ? await estimating : estimating;
    const holdRequest: HoldRequest = {
      accountId: request.caller.accountId,
      keyId: request.caller.keyId,
      amountMicros: holdFor(model.config, estimate),
      requestId: request.requestId,
      clientRequestId: request.clientRequestId,
      model: model.id,
      endpoint: endpoint.endpoint,
      instanceId: deps.instanceId,
      keyLimits: request.caller.limits,
    };
    const decided = holdFundsAtOnce(store, holdRequest);
    let hold: HeldAtOnce;
    let body = request.body;
    let loweredOutputCap: number | undefined;
    if (decided instanceof Promise) {
      try {
        hold = await decided;
      } catch (refusal) {
        // A balance too small for the model's whole output cap: the call made with the cap it holds.
        const withOutputCap = endpoint.withOutputCap?.(request.body);
        const holdOf = (amountMicros: number) => holdFundsAtOnce(store, { ...holdRequest, amountMicros });
        const lowered = await holdWithLoweredCap(refusal, { estimate, model: model.config, withOutputCap, hold: holdOf });
        ({ hold, estimate, body } = lowered);
        loweredOutputCap = lowered.outputCap;
      }
    } else hold = decided;

    const startedAt = performance.now();
    const ending = holdEnding(model, hold.holdId, estimate, request, log, startedAt);
    let answer: MeteredAnswer;
    let followStream: (() => void) | undefined;
    /** A deferred hold's write, asked for when the answer will be a stream: nothing of it goes out before. */
    let streamHoldWritten: Promise<void> | undefined;
    const streams = hold.write !== undefined && endpoint.streams?.(request.body) === true;
    const writeStreamHold = () => {
      if (!hold.write || streamHoldWritten) return;
      streamHoldWritten = hold.write();
      streamHoldWritten.catch(() => {}); // heard below, once the stream is served
    };
    let tried = model;
    /** The meter of the attempt whose stream had begun (its status line came): what a caller who leaves now is billed on. */
    let begun: StreamMeter | undefined;
    // Each attempt goes to one (channel, key); one that fails before its first data, with nothing
    // sent to the caller, moves to the next (routing/failover.ts). The hold stays the same one.
    const serving = servedBy(model, (plan) =>
      callWithFailover(
        model,
        plan,
        async (view, attempts) => {
          tried = view;
          begun = undefined;
          const calling = endpoint.call({ body, model: view, estimate, signal: request.signal });
          // A stream's hold is made durable while the upstream works (after its request is on its way), and
          // so are earlier calls' settles answered already.
          if (streams) writeStreamHold();
          hold.upstreamRequestSent?.();
          let attempt = await calling;
          // Known before the first data is read: a short stream's end marker may come with it, and
          // its settle (at the marker) then already names the channel and an answer time (to headers).
          ending.servedBy = { model: view, attempts };
          ending.upstreamMs = performance.now() - startedAt;
          ending.counted = attempt.kind === 'json' ? attempt.counted : countedBy(attempt.meter, estimate);
          if (attempt.kind === 'stream') {
            begun = attempt.meter;
            writeStreamHold();
            const metered = meterStream(deps.progress, view, hold.holdId, attempt, request, estimate, ending, log);
            attempt = metered.answer;
            followStream = metered.follow;
            // A stream that breaks before its first byte is a failed attempt: never a 200 cut short.
            await firstData(attempt.body);
          }
          return attempt;
        },
        { health: routing.health, maxAttempts: routing.maxAttempts, signal: request.signal, onFailedAttempt: logFailedAttempt(model, log) },
      ),
    );
    try {
      const served = await serving;
      answer = served.result;
      answer.upstreamMs = performance.now() - startedAt;
      if (loweredOutputCap !== undefined) answer.loweredOutputCap = loweredOutputCap;
      ending.upstreamMs = answer.upstreamMs;
    } catch (error) {
      // Only streams hear the caller leave (a call answered in one piece runs on to its end).
      const left = callerLeft(request.signal);
      const sent = (error as { sent?: unknown } | null)?.sent !== false;
      const bill = unansweredBill({ callerLeft: left, sent, begun, estimate });
      // (a deferred hold that cannot be written with its settle charges nothing: the failure stands)
      await ending.end(bill, left ? 'client_gone' : 'error').catch(() => {});
      throw left ? clientClosed() : upstreamFailure(error, tried, log);
    }
    try {
      if (streamHoldWritten) await holdCommitted(streamHoldWritten, serving, () => ending.abandon());
      // Written before the answer goes out; a store that refuses keeps it for a retry, and the caller
      // still gets what they paid for. A deferred hold is written with it: if it cannot be, nothing
      // was held or charged, and the answer is dropped unseen.
      if (answer.kind === 'json') await ending.end({ kind: 'settle', units: answer.units, reason: 'answered' }, 'ok');
    } catch (error) {
      if (error instanceof UnwrittenHoldError) {
        log.warn(
          { err: error.cause, holdId: hold.holdId, model: model.id },
          "the call's hold could not be written; its answer is dropped and nothing is charged",
        );
      }
      throw unwrittenHoldAnswer(error);
    }
    if (answer.kind === 'json') return answer;
    followStream?.();
    return answer;
  }

  return {
    run,
    admit,
    requireWritableStore,
    upstreamFailure,
    catalogue,
    catalogueFor,
    callTimeoutMs: deps.callTimeoutMs,
    instanceId: deps.instanceId,
    defaultRpm: deps.defaultRpm,
    prices: deps.prices,
    routing,
    settled,
  };
}

/** The gateway's own count of what a stream made (the prompt it counted, the output delivered). */
const countedBy = (meter: StreamMeter, estimate: Units) => () => made(meter, estimate);
