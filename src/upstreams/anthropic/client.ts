// A messages-native upstream: the caller's request goes through with the channel's own
// credentials; streams pass through event by event, read on the side for usage.
import type { Readable } from 'node:stream';
import type { TokenizerName } from '../../billing/tokens.js';
import { withFields } from '../../with-fields.js';
import { postForText, postJson } from '../http.js';
import type { Upstream } from '../pool.js';
import { observeSseJson } from '../sse.js';
import { MessagesStreamMeter, type NativeUsage } from './usage.js';

export const ANTHROPIC_VERSION = '2023-06-01';

export function anthropicHeaders(upstream: Upstream, beta?: string): Record<string, string> {
  return {
    'anthropic-version': ANTHROPIC_VERSION,
    ...(upstream.channel.api_key && { 'x-api-key': upstream.channel.api_key }),
    ...(beta && { 'anthropic-beta': beta }),
  };
}

export interface NativeMessage {
  model?: string;
  usage?: NativeUsage;
  [field: string]: unknown;
}

export async function createNativeMessage(
  upstream: Upstream,
  args: { body: Record<string, unknown>; beta?: string; signal: AbortSignal },
): Promise<NativeMessage> {
  const text = await postForText(upstream, {
    path: '/v1/messages',
    body: withFields(args.body, { stream: false }),
    headers: anthropicHeaders(upstream, args.beta),
    signal: args.signal,
  });
  return JSON.parse(text) as NativeMessage;
}

export async function streamNativeMessage(
  upstream: Upstream,
  args: { body: Record<string, unknown>; beta?: string; signal: AbortSignal; publicModel?: string; tokenizer: TokenizerName },
): Promise<{ body: Readable; meter: MessagesStreamMeter }> {
  const response = await postJson(upstream, {
    path: '/v1/messages',
    body: withFields(args.body, { stream: true }),
    headers: anthropicHeaders(upstream, args.beta),
    signal: args.signal,
  });
  const meter = new MessagesStreamMeter(args.tokenizer);
  const upstreamModel = String(args.body.model);
  const modelAlias = { upstream: upstreamModel, public: args.publicModel ?? upstreamModel };
  // Closures of this stream kind's own, not a helper shared by every kind: each call site sees one meter class.
  const observe = (event: Parameters<typeof meter.observe>[0]) => void meter.observe(event);
  // A content block's delta: its piece read from the bytes, the event not parsed.
  const skim = (bytes: Buffer, from: number, to: number) => meter.skim(bytes, from, to);
  return { body: observeSseJson(response.body, observe, { modelAlias, skim }), meter };
}
