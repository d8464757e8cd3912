// What an upstream kind offers the pivot (DESIGN §11): a whole answer, or a stream with the decoder
// that reads its body into pivot events. Each kind's folder exports one of these; the routes pick
// it by the channel's kind (upstreams/kinds.ts) and never see the kind's wire format.
import type { Readable } from 'node:stream';
import type { PivotRequest, PivotResponse, PivotStreamDecoder } from '../pivot/types.js';
import type { Upstream } from './pool.js';

export interface PivotUpstreamAdapter {
  /** A whole answer (`request.stream` is false). A non-2xx answer throws UpstreamHttpError (upstreams/http.ts). */
  complete(upstream: Upstream, request: PivotRequest, signal: AbortSignal): Promise<PivotResponse>;
  /**
   * Opens a stream (`request.stream` is true), always asking the upstream for usage where it must be
   * asked. Resolves once the upstream answered 2xx; a non-2xx answer throws UpstreamHttpError.
   */
  openStream(upstream: Upstream, request: PivotRequest, signal: AbortSignal): Promise<{ body: Readable; decoder: PivotStreamDecoder }>;
}
