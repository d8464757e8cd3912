// Gemini API calls on a gemini channel: passed through as they came (only the model in the path is
// the channel's), read on the side for usage. The upstream always streams SSE; a caller that asked
// for the JSON array gets the same chunks, each event's JSON written as the array's next element.
import type { FastifyBaseLogger } from 'fastify';
import { countTokens } from '../../billing/tokens.js';
import { atLeastDelivered } from '../../billing/usage-units.js';
import { JsonText } from '../../json-text.js';
import { tokensOfPivot } from '../../pipeline/translated-stream.js';
import type { CallArgs, MeteredAnswer, ResolvedModel } from '../../pipeline/types.js';
import { postForText, postJson } from '../http.js';
import type { TokenUsage } from '../openai-chat/usage.js';
import { createSseTap, parseSseEvent, SseFramer } from '../sse.js';
import { TokenStreamMeter } from '../stream-meter.js';
import { feedTap, PassThroughTap } from '../tap.js';
import { geminiAuthHeaders, geminiPath } from './endpoint.js';
import { pivotUsageOf } from './from-upstream.js';
import type { GenerateContentRequest, GenerateContentResponse, UsageMetadata } from './types.js';

/** The units a Gemini usage bills, read as every other kind's: through the pivot's usage. */
const geminiTokens = (usage: UsageMetadata): TokenUsage => tokensOfPivot(pivotUsageOf(usage));

function answerText(response: GenerateContentResponse): string {
  let text = '';
  for (const part of response.candidates?.[0]?.content?.parts ?? []) {
    if (typeof part.text === 'string') text += part.text;
    if (part.functionCall) text += JSON.stringify(part.functionCall);
  }
  return text;
}

/**
 * Follows a Gemini SSE stream: each chunk's parts are output delivered, its usageMetadata the totals
 * so far; the stream has no end marker, so the chunk that carries the finish reason ends it.
 */
export class GeminiStreamMeter extends TokenStreamMeter {
  private usage: UsageMetadata | undefined;

  observe(response: GenerateContentResponse & { error?: unknown }): void {
    if (response.error) {
      this.failed = true;
      return;
    }
    const candidate = response.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      this.output.add(part.text);
      if (part.functionCall) this.output.add(JSON.stringify(part.functionCall.args ?? {}));
    }
    if (response.usageMetadata) this.usage = response.usageMetadata;
    if (candidate?.finishReason) this.ended = true;
  }

  reported(): TokenUsage | undefined {
    if (!this.usage) return undefined;
    const usage = geminiTokens(this.usage);
    // Cut short or left: the output at least what was delivered (the running count may lag behind).
    return this.ended ? usage : atLeastDelivered(usage, this.output.tokens());
  }
}

export async function callGeminiNative(args: CallArgs<GenerateContentRequest>, form: 'plain' | 'sse' | 'array'): Promise<MeteredAnswer> {
  const { body, model, estimate, signal } = args;
  const headers = await geminiAuthHeaders(model.upstream);
  if (form === 'plain') {
    const text = await postForText(model.upstream, { path: geminiPath(model.upstream, model.upstreamModel, 'generateContent'), body, headers, signal });
    const response = JSON.parse(text) as GenerateContentResponse;
    const counted = () => ({ input_token: estimate.input_token ?? 0, output_token: countTokens(answerText(response), model.config.tokenizer) });
    return { kind: 'json', body: new JsonText(text), units: response.usageMetadata ? geminiTokens(response.usageMetadata) : counted(), counted };
  }
  const upstream = await postJson(model.upstream, { path: geminiPath(model.upstream, model.upstreamModel, 'streamGenerateContent'), body, headers, signal });
  const meter = new GeminiStreamMeter(model.config.tokenizer);
  const tap = form === 'sse' ? sseTap(meter) : jsonArrayTap(meter);
  return {
    kind: 'stream',
    contentType: form === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8',
    body: feedTap(upstream.body, tap),
    meter,
  };
}

/** Each event as it came, and read on the side. */
const sseTap = (meter: GeminiStreamMeter): PassThroughTap => createSseTap(({ data }) => void observe(meter, data));

/** Each event's JSON as the next element of one array, closed when the upstream ended cleanly. */
function jsonArrayTap(meter: GeminiStreamMeter): PassThroughTap {
  const framer = new SseFramer();
  let opened = false;
  return new PassThroughTap((chunk, eventRead) => {
    let out = '';
    framer.load(chunk);
    while (framer.next()) {
      const { data } = parseSseEvent(framer.raw());
      if (!data.startsWith('{')) continue;
      observe(meter, data);
      eventRead(out.length);
      out += `${opened ? ',\r\n' : '['}${data}`;
      opened = true;
    }
    // A stream cut short is left open: the caller's parser must not take it for whole.
    if (!chunk && meter.completed) out += opened ? ']' : '[]';
    return out.length > 0 ? out : undefined;
  });
}

function observe(meter: GeminiStreamMeter, data: string): void {
  if (!data.startsWith('{')) return;
  try {
    meter.observe(JSON.parse(data) as GenerateContentResponse);
  } catch {
    // a malformed chunk is passed on as it came; it carries nothing the bill reads
  }
}

/** countTokens, asked of the channel itself. */
export async function countGeminiTokensNative(model: ResolvedModel, body: GenerateContentRequest, _log: FastifyBaseLogger): Promise<number> {
  const headers = await geminiAuthHeaders(model.upstream);
  const signal = AbortSignal.timeout(model.upstream.channel.timeouts.headers_ms);
  const text = await postForText(model.upstream, {
    path: geminiPath(model.upstream, model.upstreamModel, 'countTokens'),
    body: { contents: body.contents ?? [] },
    headers,
    signal,
  });
  const { totalTokens } = JSON.parse(text) as { totalTokens?: unknown };
  if (typeof totalTokens !== 'number') throw new Error('the upstream answered countTokens without totalTokens');
  return totalTokens;
}
