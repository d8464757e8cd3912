// A chat-completions stream re-emitted as the messages event stream. The translation itself is
// the pure ChatToMessagesStream; this file only moves bytes and reports what was generated. It is
// one Transform (a PassThroughTap) between the upstream's body and the caller, as the other metered
// streams are: no generator and no promise per chunk on the hot path, and the end-marker gate
// (pipeline/end-marker-gate.ts) holds message_stop in place until the settle lands.
import type { Readable } from 'node:stream';
import type { TokenizerName } from '../../billing/tokens.js';
import type { StreamMeter } from '../../pipeline/types.js';
import type { MessagesStreamEvent } from '../anthropic/types.js';
import type { Upstream } from '../pool.js';
import { parseSseEvent, SseFramer } from '../sse.js';
import { PassThroughTap } from '../tap.js';
import { TextChunkSkimmer, textChunk } from './chunk-skim.js';
import { openChatStream } from './client.js';
import { ChatToMessagesStream, formatSse } from './stream-to-messages.js';
import type { ChatCompletionChunk, ChatRequest } from './types.js';
import { ChatStreamMeter, type TokenUsage } from './usage.js';

export interface TranslatedStream {
  body: Readable;
  meter: StreamMeter;
}

const UPSTREAM_FAILED = 'upstream provider error';

/**
 * The translated stream's state: completed by the upstream's `[DONE]`; failed once it sent its
 * error event. Billed on the upstream's own usage, the figures message_delta carries (DESIGN §5),
 * never on the gateway's estimate of the prompt that message_start showed.
 */
export class TranslatedMeter implements StreamMeter {
  failed = false;
  constructor(readonly chat: ChatStreamMeter) {}
  get completed() {
    return this.chat.completed && !this.failed;
  }
  reported(): TokenUsage | undefined {
    return this.chat.reported();
  }
  delivered() {
    return this.chat.delivered();
  }
}

export async function streamChatAsMessages(
  upstream: Upstream,
  args: { request: ChatRequest; ids: { id: string; model: string; inputTokens: number }; signal: AbortSignal; tokenizer: TokenizerName },
): Promise<TranslatedStream> {
  const source = await openChatStream(upstream, args.request, args.signal);
  const meter = new TranslatedMeter(new ChatStreamMeter(args.tokenizer));
  const body = translateChatStream(source, { translator: new ChatToMessagesStream(args.ids), meter, signal: args.signal });
  return { body, meter };
}

function encode(events: MessagesStreamEvent[]): string {
  let out = '';
  for (const event of events) out += formatSse(event);
  return out;
}

/**
 * `source` (the upstream's chat SSE bytes) piped, with backpressure, into one tap that frames its
 * events, feeds each chunk to `translator` and forwards the messages events that come back.
 *
 * A failure (an upstream error event, a body that breaks, an end without `[DONE]`) before anything
 * was sent fails the stream: the call is a 502 and nothing is billed (the pipeline's firstData sees
 * the error). After, the client has a 200 in hand, so the stream ends with the protocol's error
 * event. A caller that left (`signal` aborted) always fails it. Once `[DONE]` or the error event is
 * out, the stream ends and the upstream is let go, whatever it sends after.
 */
export function translateChatStream(
  source: Readable,
  { translator, meter, signal }: { translator: ChatToMessagesStream; meter: TranslatedMeter; signal: AbortSignal },
): PassThroughTap {
  const framer = new SseFramer();
  const skimmer = new TextChunkSkimmer();
  /** A translated event went out: a failure from now on is told in the stream. */
  let sent = false;
  /** `[DONE]` or the error event went out: nothing more is read. */
  let over = false;
  /** Why the upstream's body stopped short, if it did. */
  let broken: Error | undefined;

  const fail = (error: unknown): string => {
    if (!sent || signal.aborted) throw error;
    meter.failed = true;
    return finish(translator.fail(UPSTREAM_FAILED));
  };
  const finish = (events: MessagesStreamEvent[]): string => {
    over = true;
    // After this step's output: a stop inside it would end the tap under the write in progress,
    // and (undici pushing synchronously) could cut an upstream response a few bytes from its end.
    queueMicrotask(stop);
    return encode(events);
  };

  const translate = (raw: string): string => {
    const { data } = parseSseEvent(raw);
    if (data === '[DONE]') {
      meter.chat.markDone();
      return finish(translator.end());
    }
    const text = skimmer.read(data);
    let chunk: ChatCompletionChunk;
    try {
      chunk = text === undefined ? (JSON.parse(data) as ChatCompletionChunk) : textChunk(text);
    } catch {
      return ''; // a malformed line carries nothing a messages client could use
    }
    meter.chat.observe(chunk);
    if (meter.chat.failed) return fail(new Error('upstream sent an error event'));
    sent = true;
    return encode(translator.push(chunk));
  };

  const tap = new PassThroughTap((chunk, eventRead) => {
    if (over) return undefined;
    let out = '';
    try {
      // A body that broke off mid-event leaves no event to finish: only a clean end flushes the framer.
      const events = chunk ? framer.push(chunk) : broken ? [] : framer.end();
      for (const { raw } of events) {
        const before = out.length;
        out += translate(raw);
        eventRead(before);
        if (over) return out;
      }
      // An upstream that ends without `[DONE]` broke off: the caller must not take it for whole.
      if (!chunk) out += fail(broken ?? new Error('the upstream stream ended before [DONE]'));
    } catch (error) {
      out += fail(error);
    }
    return out.length > 0 ? out : undefined;
  });

  function stop() {
    source.unpipe(tap);
    if (!tap.destroyed && !tap.writableEnded) tap.end();
    if (!source.destroyed) source.destroy();
  }

  /** The body failed or closed before its end: the tap ends and its flush tells the caller (or fails). */
  const breakOff = (error: Error) => {
    if (over || tap.destroyed || tap.writableEnded) return;
    // A caller that left hears nothing more: the stream fails at once, whatever is still buffered.
    if (signal.aborted) return void tap.destroy(error);
    broken = error;
    tap.end();
  };
  source.pipe(tap);
  source.once('error', breakOff);
  source.once('close', () => {
    if (!source.readableEnded) breakOff(source.errored ?? new Error('the upstream body closed before its end'));
  });
  // The caller leaving (the tap destroyed) stops the upstream call.
  tap.once('close', () => {
    if (!source.destroyed) source.destroy();
  });
  return tap;
}
