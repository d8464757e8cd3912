// What an endpoint plugs into the metered-call pipeline: its model type, estimate and call.
import type { Readable } from 'node:stream';
import type { KeyLimits } from '../billing/key-limits.js';
import type { Units } from '../billing/prices.js';
import type { ModelConfig, ModelType } from '../config/schema.js';
import type { ModelRoute } from '../routing/routes.js';
import type { Upstream } from '../upstreams/pool.js';

/** The authenticated caller, resolved from the API key (or, on the account API, a console session). */
export interface Caller {
  /** The key; for a console session signed in by link, which has none, `session:…` (console/sessions.ts). */
  keyId: string;
  accountId: string;
  rpm: number | null;
  /**
   * False for a test key (its account is a test twin): served by the test catalogue alone, the
   * sandbox, whatever model it names (docs/api.md "Test mode").
   */
  livemode: boolean;
  /** The key's limits (allowed models, expiry, spend caps); absent for a key without any. */
  limits?: KeyLimits;
  /** Set when the operator suspended the key's account: every request is refused (http/auth.ts). */
  suspended?: true;
}

export interface ResolvedModel {
  id: string;
  config: ModelConfig;
  /** The channel (and key) this call goes to, and the model's name there. */
  upstreamModel: string;
  upstream: Upstream;
  /** Every channel the model is served by (routing/plan.ts orders them per call). */
  routes: ModelRoute[];
}

/** A complete answer, billed on `units` before it is returned. */
export interface JsonAnswer {
  kind: 'json';
  statusCode?: number;
  /** The answer's value, or its text as the upstream wrote it (JsonText), sent without serializing it again. */
  body: unknown;
  /** The upstream's usage, or the gateway's own count of the answer when the upstream gave none. */
  units: Units;
  /** The gateway's own count of the prompt and the answer, billed for a figure of `units` that is not sane. */
  counted?: () => Units;
  /** How long the upstream took to answer, set by the pipeline. */
  upstreamMs?: number;
  /** The output cap the call was sent with in place of the model's maximum, which the balance could not hold (set by the pipeline). */
  loweredOutputCap?: number;
}

/** What a stream's reader has seen, for its bill when it ends (DESIGN §5). */
export interface StreamMeter {
  /** The protocol's end marker arrived: `[DONE]`, `message_stop`, `response.completed`, the speech end code. */
  readonly completed: boolean;
  /** The upstream reported an error in the stream (an error event or code); the caller has seen it. */
  readonly failed: boolean;
  /** Usage as the upstream reported it, when it did. */
  reported(): Units | undefined;
  /** Output made so far, counted by the gateway (the prompt is added by the pipeline). */
  delivered(): Units;
  /**
   * Audio whose upstream reports usage only at its end (speech, speech translation): what the audio
   * delivered so far covers, for a caller who leaves (DESIGN §5). Absent for token streams.
   */
  audioCovered?(): AudioCovered;
}

/** No audio yet; the units the audio delivered covers, measured; or audio whose cover cannot be measured. */
export type AudioCovered = { kind: 'none' } | { kind: 'measured'; units: Units } | { kind: 'unmeasured' };

/**
 * A streamed answer, billed once the body ends, breaks or is abandoned: on the upstream's usage
 * when it completed; released when the upstream failed; for what was made when the caller left.
 */
export interface StreamAnswer {
  kind: 'stream';
  statusCode?: number;
  contentType: string;
  body: Readable;
  meter: StreamMeter;
  /** How long the upstream took to its first byte, set by the pipeline. */
  upstreamMs?: number;
  /** As JsonAnswer's. */
  loweredOutputCap?: number;
}

export type MeteredAnswer = JsonAnswer | StreamAnswer;

export interface CallArgs<Body> {
  body: Body;
  model: ResolvedModel;
  estimate: Units;
  signal: AbortSignal;
}

export interface MeteredEndpoint<Body> {
  /** The name usage records carry, e.g. `chat.completions`. */
  endpoint: string;
  modelType: ModelType;
  /**
   * Units to hold funds for, before the upstream is called: everything the request carries, its
   * input counted with the model's tokenizer, its output cap. Throws a 400 for an absurd request.
   * A promise only while long texts are counted off the event loop (billing/token-worker.ts).
   */
  estimate(body: Body, model: ResolvedModel): Units | Promise<Units>;
  /**
   * The route took the rate limit itself, before reading the body (uploads: nothing is read for a
   * key past its limit), so the pipeline does not take a second token.
   */
  admitsBeforeBody?: boolean;
  /**
   * Whether this request answers with a stream: its hold is then made durable while the upstream
   * works (the settle journal, or a write of its own), before its first byte goes out (and streams
   * are never replayed by Idempotency-Key).
   */
  streams?(body: Body): boolean;
  /**
   * For a body that names no output cap, that body asking for `tokens` at most: a balance that cannot
   * hold the model's whole cap then makes the call with the cap it holds (pipeline/output-cap.ts).
   * Undefined when the body names its own cap, which is never lowered.
   */
  withOutputCap?(body: Body): ((tokens: number) => Body) | undefined;
  /** The prices this request is billed at, where it picks among the model's (an image's size and quality); default the model's `price`. */
  price?(body: Body, model: ModelConfig): ModelConfig['price'];
  call(args: CallArgs<Body>): Promise<MeteredAnswer>;
}

export interface MeteredRequest<Body> {
  caller: Caller;
  modelId: string | undefined;
  body: Body;
  /** The gateway's own id of the request (the ledger's request id). */
  requestId: string;
  /** The caller's x-request-id, kept beside it. */
  clientRequestId?: string | null;
  signal: AbortSignal;
  /** A line of a batch: billed at the model's batch price (its `batch_discount` off every unit price). */
  batchLine?: boolean;
  /**
   * Puts the hold's end into the request's own log line when that line is still to be written (one
   * line per call); false when it went out already (a caller who left mid-stream), and the pipeline
   * then writes a line of its own.
   */
  addToLogLine?(fields: HoldLogFields): boolean;
}

/** A metered call's hold end, as its log line carries it (metered-call.ts, endHold; http/request-line.ts writes it). */
export interface HoldLogFields {
  holdId: string;
  model: string;
  bill: 'settle' | 'release';
  reason: string;
  units?: Record<string, number | undefined>;
  chargeMicros?: number;
  channel?: string;
  channelKey?: string;
  attempts?: number;
  landed: boolean;
}
