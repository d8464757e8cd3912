// A stream translated through the pivot: the upstream's body, read by its kind's decoder into pivot
// events, written by the inbound format's encoder. One Transform (a PassThroughTap) between the
// upstream and the caller, as every metered stream is, so the end-marker gate
// (pipeline/end-marker-gate.ts) holds the format's end in place until the settle lands.
import type { Readable } from 'node:stream';
import type { TokenizerName } from '../billing/tokens.js';
import { atLeastDelivered, unitsOfPivot } from '../billing/usage-units.js';
import { MESSAGES } from '../errors.js';
import type { PivotEvent, PivotStreamDecoder, PivotStreamEncoder, PivotUsage } from '../pivot/types.js';
import type { TokenUsage } from '../upstreams/openai-chat/usage.js';
import { TokenStreamMeter } from '../upstreams/stream-meter.js';
import { PassThroughTap } from '../upstreams/tap.js';

/** Units billed for a pivot usage, each part of the prompt and the output at its own price. */
export const tokensOfPivot = (usage: PivotUsage): TokenUsage => unitsOfPivot(usage);

/**
 * What a translated stream delivered: completed by the upstream's end marker (the pivot's `done`),
 * failed by its error; billed on the upstream's last usage, or the gateway's count of the output.
 */
export class PivotStreamMeter extends TokenStreamMeter {
  private usage: PivotUsage | undefined;

  observe(event: PivotEvent): void {
    switch (event.type) {
      case 'text':
      case 'reasoning':
        this.output.add(event.text);
        break;
      case 'tool_call':
        this.output.add(event.arguments);
        break;
      case 'usage':
        this.usage = event.usage;
        break;
      case 'done':
        this.ended = true;
        break;
      case 'error':
        this.failed = true;
        break;
    }
  }

  /** The usage the stream carried so far (a cut stream still bills what the upstream reported of its prompt). */
  reportedUsage(): PivotUsage | undefined {
    return this.usage;
  }

  reported(): TokenUsage | undefined {
    if (!this.usage) return undefined;
    if (this.ended) return tokensOfPivot(this.usage);
    // Cut short or left: the prompt as the upstream reported it (messages and Bedrock say it
    // first), the output at least what was delivered (its running count may lag behind).
    return atLeastDelivered(unitsOfPivot(this.usage), this.output.tokens());
  }
}

export interface TranslatedStream {
  body: PassThroughTap;
  meter: PivotStreamMeter;
}

/**
 * `source` (the upstream's body) piped, with backpressure, into one tap that decodes its frames
 * into pivot events, meters them and writes what the encoder makes of them.
 *
 * A failure (an upstream error event, a body that breaks, an end without the end marker) before
 * anything was sent fails the stream: the call is a 502 and nothing is billed (the pipeline's first
 * data sees the error). After, the caller has a 200 in hand, so the stream ends with the format's
 * error. A caller that left (`signal` aborted) always fails it. Once the end or the error is out,
 * the upstream is let go, whatever it sends after.
 */
export function translatePivotStream(
  source: Readable,
  args: { decoder: PivotStreamDecoder; encoder: PivotStreamEncoder; tokenizer: TokenizerName; signal: AbortSignal },
): TranslatedStream {
  const { decoder, encoder, signal } = args;
  const meter = new PivotStreamMeter(args.tokenizer);
  /** Something went out: a failure from now on is told in the stream. */
  let sent = false;
  /** The end or the error went out: nothing more is read. */
  let over = false;
  /** Why the upstream's body stopped short, if it did. */
  let broken: Error | undefined;

  const fail = (error: unknown): string => {
    if (!sent || signal.aborted) throw error;
    meter.failed = true;
    return finish(encoder.fail(MESSAGES.upstream));
  };
  const finish = (out: string): string => {
    over = true;
    // After this step's output: a stop inside it would end the tap under the write in progress.
    queueMicrotask(stop);
    return out;
  };
  const translate = (event: PivotEvent): string => {
    meter.observe(event);
    if (event.type === 'error') return fail(new Error(`upstream sent an error event: ${event.message}`));
    const out = encoder.push(event);
    if (event.type === 'done') return finish(out);
    if (out !== '') sent = true;
    return out;
  };

  const body = new PassThroughTap((chunk, eventRead) => {
    if (over) return undefined;
    let out = '';
    try {
      // A body that broke off mid-frame leaves nothing to finish: only a clean end flushes the decoder.
      const events = chunk ? decoder.push(chunk) : broken ? [] : decoder.end();
      for (const event of events) {
        const before = out.length;
        out += translate(event);
        eventRead(before);
        if (over) return out;
      }
      // An upstream that ends without its end marker broke off: the caller must not take it for whole.
      if (!chunk) out += fail(broken ?? new Error('the upstream stream ended before its end marker'));
    } catch (error) {
      out += fail(error);
    }
    return out.length > 0 ? out : undefined;
  });

  function stop() {
    source.unpipe(body);
    if (!body.destroyed && !body.writableEnded) body.end();
    if (!source.destroyed) source.destroy();
  }

  /** The body failed or closed before its end: the tap ends and its flush tells the caller (or fails). */
  const breakOff = (error: Error) => {
    if (over || body.destroyed || body.writableEnded) return;
    // A caller that left hears nothing more: the stream fails at once, whatever is still buffered.
    if (signal.aborted) return void body.destroy(error);
    broken = error;
    body.end();
  };
  source.pipe(body);
  source.once('error', breakOff);
  source.once('close', () => {
    if (!source.readableEnded) breakOff(source.errored ?? new Error('the upstream body closed before its end'));
  });
  // The caller leaving (the tap destroyed) stops the upstream call.
  body.once('close', () => {
    if (!source.destroyed) source.destroy();
  });
  return { body, meter };
}
