// What an endpoint plugs into the metered-call pipeline: its model type, estimate and call.
import type { Readable } from 'node:stream';
import type { ModelConfig, ModelType } from '../config/schema.js';
import type { Units } from '../billing/prices.js';
import type { Upstream } from '../upstreams/pool.js';

/** The authenticated caller, resolved from the API key. */
export interface Caller {
  keyId: string;
  accountId: string;
  rpm: number | null;
}

export interface ResolvedModel {
  id: string;
  config: ModelConfig;
  upstreamModel: string;
  upstream: Upstream;
}

/** A complete answer, billed on `units` before it is returned. */
export interface JsonAnswer {
  kind: 'json';
  statusCode?: number;
  body: unknown;
  units: Units;
}

/**
 * A streamed answer: billed once the body ends, breaks or is abandoned, on `units()` then —
 * or released when `units()` is undefined: the upstream failed before producing anything.
 */
export interface StreamAnswer {
  kind: 'stream';
  statusCode?: number;
  contentType: string;
  body: Readable;
  units(): Units | undefined;
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
  /** Units to hold funds for, before the upstream is called. */
  estimate(body: Body, model: ResolvedModel): Units;
  call(args: CallArgs<Body>): Promise<MeteredAnswer>;
}

export interface MeteredRequest<Body> {
  caller: Caller;
  modelId: string | undefined;
  body: Body;
  requestId: string;
  signal: AbortSignal;
}
