// A call whose inbound format is not the serving upstream's own, made through the pivot: the
// format reads the body into the pivot request and writes the answer (or the stream) back; the
// channel's kind sends it and reads what came. Billed on the upstream's usage as every call is.
import type { Units } from '../billing/prices.js';
import { countTokens } from '../billing/tokens.js';
import type { PivotRequest, PivotResponse, PivotStreamEncoder } from '../pivot/types.js';
import { pivotAdapterFor } from '../upstreams/kinds.js';
import { tokensOfPivot, translatePivotStream } from './translated-stream.js';
import type { CallArgs, MeteredAnswer } from './types.js';

const SSE = 'text/event-stream; charset=utf-8';

/** What an inbound format offers the pivot: its request read in, its answer and its stream written out. */
export interface InboundFormat<Body> {
  toPivot(body: Body, upstreamModel: string): PivotRequest;
  answer(response: PivotResponse, args: CallArgs<Body>): unknown;
  encoder(args: CallArgs<Body>): PivotStreamEncoder;
  /** The stream's content type; SSE unless the format streams otherwise (Gemini's JSON array). */
  streamContentType?(body: Body): string;
}

/**
 * The format's refusals come before the hold when the route calls `toPivot` in its estimate; here
 * they are made again for the serving channel (a failover may reach another kind).
 */
export async function callThroughPivot<Body>(format: InboundFormat<Body>, args: CallArgs<Body>): Promise<MeteredAnswer> {
  const { model, signal, estimate } = args;
  const request = format.toPivot(args.body, model.upstreamModel);
  // The hold covers the model's cap: an upstream is never let make more than was held for.
  request.maxTokens ??= model.config.max_output_tokens;
  const adapter = pivotAdapterFor(model.upstream.channel.kind);
  if (request.stream) {
    const opened = await adapter.openStream(model.upstream, request, signal);
    const { body, meter } = translatePivotStream(opened.body, {
      decoder: opened.decoder,
      encoder: format.encoder(args),
      tokenizer: model.config.tokenizer,
      signal,
    });
    return { kind: 'stream', contentType: format.streamContentType?.(args.body) ?? SSE, body, meter };
  }
  const response = await adapter.complete(model.upstream, request, signal);
  const counted = (): Units => ({ input_token: estimate.input_token ?? 0, output_token: countTokens(outputText(response), model.config.tokenizer) });
  const units = response.usage ? tokensOfPivot(response.usage) : counted();
  return { kind: 'json', body: format.answer(response, args), units, counted };
}

/** What the answer generated, as the gateway counts it when the upstream reported no usage. */
function outputText(response: PivotResponse): string {
  let text = response.text;
  for (const reasoning of response.reasoning ?? []) text += reasoning.text;
  for (const call of response.toolCalls) text += call.name + call.arguments;
  return text;
}
