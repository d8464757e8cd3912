// A chat-completions stream re-emitted as the messages event stream. The translation itself is
// the pure ChatToMessagesStream; this file only moves bytes and reports what was generated.
import { Readable } from 'node:stream';
import type { TokenizerName } from '../../billing/tokens.js';
import type { StreamMeter } from '../../pipeline/types.js';
import type { MessagesStreamEvent } from '../anthropic/types.js';
import type { Upstream } from '../pool.js';
import { readSseEvents } from '../sse.js';
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
 * error event. Its input is the count message_start showed (the gateway's own, as the upstream's
 * comes only at the end), so the caller is billed the figure it read at both ends of the stream.
 */
class TranslatedMeter implements StreamMeter {
  failed = false;
  constructor(
    readonly chat: ChatStreamMeter,
    private readonly inputTokens: number,
  ) {}
  get completed() {
    return this.chat.completed && !this.failed;
  }
  reported(): TokenUsage | undefined {
    const upstream = this.chat.reported();
    return upstream && { input_token: this.inputTokens, output_token: upstream.output_token };
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
  const translator = new ChatToMessagesStream(args.ids);
  const meter = new TranslatedMeter(new ChatStreamMeter(args.tokenizer), args.ids.inputTokens);
  const encode = (events: MessagesStreamEvent[]) => events.map(formatSse).join('');

  async function* messagesEvents(): AsyncGenerator<string> {
    let seenAny = false;
    try {
      for await (const { data } of readSseEvents(source)) {
        if (data === '[DONE]') {
          meter.chat.markDone();
          break;
        }
        let chunk: ChatCompletionChunk;
        try {
          chunk = JSON.parse(data) as ChatCompletionChunk;
        } catch {
          continue; // a malformed line carries nothing a messages client could use
        }
        meter.chat.observe(chunk);
        if (meter.chat.failed) throw new Error('upstream sent an error event');
        seenAny = true;
        const out = encode(translator.push(chunk));
        if (out) yield out;
      }
      // An upstream that ends without `[DONE]` broke off: the caller must not take it for whole.
      if (!meter.chat.completed) throw new Error('the upstream stream ended before [DONE]');
      yield encode(translator.end());
    } catch (error) {
      // Before anything was sent the call simply failed (a 502, nothing billed); after, the
      // client has a 200 in hand, so the stream ends with the protocol's error event.
      if (!seenAny || args.signal.aborted) throw error;
      meter.failed = true;
      yield encode(translator.fail(UPSTREAM_FAILED));
    }
  }

  return { body: Readable.from(messagesEvents(), { objectMode: false }), meter };
}
