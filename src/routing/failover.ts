// One call over a model's channels: tried on the plan's first (channel, key), and moved on before
// anything reached the caller when the upstream could not serve it. A refusal that is the caller's
// own fault (400, 404, 413, 422) is never retried elsewhere; a refused or rate-limited key moves to
// the channel's next key, anything else to the next channel. Bounded by `maxAttempts` and by the
// call's own signal (its deadline, or the caller leaving).
import { GatewayError } from '../errors.js';
import type { ResolvedModel } from '../pipeline/types.js';
import { UpstreamHttpError } from '../upstreams/http.js';
import { ConnectionWaitTimeoutError } from '../upstreams/wait-bounded-pool.js';
import type { AttemptFailure, RouteHealth } from './health.js';
import type { Attempt } from './plan.js';

const CALLER_FAULT = new Set([400, 404, 413, 422]);
// No answer from the upstream: the call may go to another channel.
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

export type FailoverStep =
  /** Give this error to the caller: the caller's fault, or not an upstream failure. */
  { next: 'none' } | { next: 'key'; failure: AttemptFailure } | { next: 'channel'; failure: AttemptFailure | undefined };

export function failoverStep(error: unknown): FailoverStep {
  if (error instanceof UpstreamHttpError) {
    const status = error.statusCode;
    if (CALLER_FAULT.has(status)) return { next: 'none' };
    if (status === 401 || status === 403) return { next: 'key', failure: { kind: 'key_refused', status } };
    if (status === 429) return { next: 'key', failure: { kind: 'rate_limited', retryAfterMs: error.retryAfterMs } };
    if (status === 408 || status >= 500) return { next: 'channel', failure: { kind: 'server_error', status } };
    return { next: 'none' };
  }
  // This instance's own pool was full: another channel may have room; the upstream did nothing wrong.
  if (error instanceof ConnectionWaitTimeoutError) return { next: 'channel', failure: undefined };
  // An answer the gateway could not use (malformed, cut short before its first data).
  if (error instanceof GatewayError)
    return error.status >= 500 ? { next: 'channel', failure: { kind: 'server_error', status: error.status } } : { next: 'none' };
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return { next: 'channel', failure: { kind: 'unreachable' } };
  return { next: 'none' };
}

export interface Served<T> {
  result: T;
  /** The model as the serving channel and key saw it. */
  model: ResolvedModel;
  /** Attempts sent, the serving one included. */
  attempts: number;
}

/** Thrown when health has every channel of the model out (the caller gets 502 and when to retry). */
export class NoChannelAvailableError extends Error {
  override name = 'NoChannelAvailableError';
  constructor(
    readonly model: string,
    readonly retryAtMs: number | undefined,
  ) {
    super(`no channel of model ${model} is available now`);
  }
}

export interface FailedAttempt {
  channel: string;
  keyId: string | null;
  error: unknown;
  step: FailoverStep;
}

export interface FailoverOptions {
  health: RouteHealth;
  maxAttempts: number;
  /** The call's own: its deadline, or the caller leaving, ends the attempts. */
  signal: AbortSignal;
  /** Told of an attempt that failed once the next one is about to be sent (the last failure is the caller's to report). */
  onFailedAttempt?: (attempt: FailedAttempt) => void;
  /** False for a failure after which the work must not be asked of anyone again (it may be under way). */
  mayRepeat?: (error: unknown) => boolean;
  /** How long to wait for a half-open probe in flight when it alone keeps every channel out (PROBE_WAIT_MS). */
  probeWaitMs?: number;
}

/**
 * How long a call whose every channel is out only because a half-open probe is in flight waits for
 * that probe's outcome. Waiting, rather than refusing, is what lets a burst through a recovering
 * channel: the probe that succeeds closes the circuit and wakes every waiter, who are then admitted
 * at once; one that fails re-opens it and they get the 502 with its cool-down as Retry-After. Short,
 * because a probe may be a long call: past it the caller is told to retry in a second.
 */
export const PROBE_WAIT_MS = 2_000;

export async function callWithFailover<T>(
  model: ResolvedModel,
  plan: Attempt[],
  call: (model: ResolvedModel, attempt: number) => Promise<T>,
  { health, maxAttempts, signal, onFailedAttempt, mayRepeat = () => true, probeWaitMs = PROBE_WAIT_MS }: FailoverOptions,
): Promise<Served<T>> {
  let attempts = 0;
  let lastError: unknown;
  let failed: FailedAttempt | undefined;
  // Only for a call that found every channel out (not on the way of the usual call).
  let waitUntil: number | undefined;
  // Rounds over the plan: a second one only after a round sent nothing and a probe came back.
  for (;;) {
    let skipChannel: string | undefined;
    for (const { route, upstream } of plan) {
      if (attempts >= maxAttempts || signal.aborted) break;
      if (route.channel === skipChannel) continue;
      const keyId = upstream.keyId ?? null;
      const now = Date.now();
      if (keyId !== null && !health.keyAvailable(route.channel, keyId, now)) continue;
      if (!health.channelAvailable(route.channel, now)) {
        skipChannel = route.channel;
        continue;
      }
      // The model as resolved already is this attempt's view when it names the same (channel, key): a
      // model on one channel with one key, the usual case, is not copied per call.
      const view: ResolvedModel =
        model.upstream === upstream && model.upstreamModel === route.upstreamModel ? model : { ...model, upstream, upstreamModel: route.upstreamModel };
      if (failed) onFailedAttempt?.(failed);
      failed = undefined;
      const startedAt = performance.now();
      attempts++;
      try {
        const result = await call(view, attempts);
        health.succeeded({ channel: route.channel, keyId }, performance.now() - startedAt, Date.now());
        return { result, model: view, attempts };
      } catch (error) {
        lastError = error;
        const target = { channel: route.channel, keyId };
        if (signal.aborted) {
          // The caller left or the deadline passed: nothing more to try, and nothing learnt of the upstream.
          health.released(target, Date.now());
          break;
        }
        const step = failoverStep(error);
        // Every attempt sent ends in succeeded, failed or released, so a half-open probe is never held for good.
        if (step.next !== 'none' && step.failure) health.failed(target, step.failure, Date.now());
        else health.released(target, Date.now());
        if (step.next === 'none' || !mayRepeat(error)) break;
        failed = { channel: route.channel, keyId, error, step };
        if (step.next === 'channel') skipChannel = route.channel;
      }
    }
    if (attempts > 0) throw withAttempts(lastError, attempts);
    if (signal.aborted) throw signal.reason;
    const channels = [...new Set(plan.map((a) => a.route.channel))];
    waitUntil ??= Date.now() + probeWaitMs;
    const probe = Date.now() < waitUntil ? health.probeEnded(channels, Date.now()) : undefined;
    if (!probe || !(await backBefore(probe, waitUntil - Date.now(), signal))) {
      if (signal.aborted) throw signal.reason;
      throw new NoChannelAvailableError(model.id, health.nextAvailableAt(channels, Date.now()));
    }
  }
}

/** Whether the probe came back within `ms` and before the call's signal ended it. */
function backBefore(probe: Promise<void>, ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (back: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(back);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    signal.addEventListener('abort', onAbort, { once: true });
    probe.then(() => done(true));
  });
}

/**
 * Whether an upstream that failed this way surely did not start the work: it refused it, or was
 * never reached. A timeout waiting for its answer, a connection cut mid-request or an answer that
 * could not be read may hide work under way, which a second channel would start (and bill) again.
 */
export function surelyNotStarted(error: unknown): boolean {
  if (error instanceof UpstreamHttpError || error instanceof ConnectionWaitTimeoutError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

/** The last attempt's error, told how many attempts were made (the log line names them). */
function withAttempts(error: unknown, attempts: number): unknown {
  if (error !== null && typeof error === 'object') Object.assign(error, { attempts });
  return error;
}
