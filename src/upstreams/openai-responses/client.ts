// OpenAI's responses API, passed through: a whole response, or its typed event stream.
import type { Readable } from 'node:stream';
import type { TokenizerName } from '../../billing/tokens.js';
import { unitsOfPivot } from '../../billing/usage-units.js';
import type { PivotUsage } from '../../pivot/types.js';
import { withFields } from '../../with-fields.js';
import { postForText, postJson } from '../http.js';
import { openAiAuthHeaders, openAiPath } from '../openai-chat/endpoint.js';
import type { TokenUsage } from '../openai-chat/usage.js';
import type { Upstream } from '../pool.js';
import { observeSseJson } from '../sse.js';
import { TokenStreamMeter } from '../stream-meter.js';
import { skimOutputDelta } from './delta-skim.js';

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  output_tokens: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens?: number;
}

export interface ResponseObject {
  model?: string;
  usage?: ResponsesUsage | null;
  [field: string]: unknown;
}

// response.incomplete ends a stream normally (an output cap reached, say) and is billed like completed.
const COMPLETED = new Set(['response.completed', 'response.incomplete']);

/** The responses API counts cached reads and writes among input_tokens, reasoning among output_tokens, as the pivot does. */
export function pivotUsageOfResponses(usage: ResponsesUsage): PivotUsage {
  const pivot: PivotUsage = { input: usage.input_tokens, output: usage.output_tokens };
  const { cached_tokens: cacheRead, cache_write_tokens: cacheWrite } = usage.input_tokens_details ?? {};
  if (cacheRead) pivot.cacheRead = cacheRead;
  if (cacheWrite) pivot.cacheWrite = cacheWrite;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (reasoning) pivot.reasoning = reasoning;
  return pivot;
}

export const responsesTokens = (usage: ResponsesUsage): TokenUsage => unitsOfPivot(pivotUsageOfResponses(usage));

/** Usage arrives in the terminal event; until then the text and argument deltas are the output delivered. */
export class ResponsesStreamMeter extends TokenStreamMeter {
  usage: ResponsesUsage | undefined;

  observe(event: { type?: string; response?: ResponseObject; delta?: unknown }): void {
    if (event.type && COMPLETED.has(event.type)) {
      this.ended = true;
      if (event.response?.usage) this.usage = event.response.usage;
    } else if (event.type === 'response.output_text.delta' || event.type === 'response.function_call_arguments.delta') this.output.add(event.delta);
    else if (event.type === 'error' || event.type === 'response.failed') this.failed = true;
  }

  /** An event's data as bytes (`bytes[from, to)`): true when it was a delta of output, now counted; false to parse and observe it. */
  skim(bytes: Buffer, from: number, to: number): boolean {
    return skimOutputDelta(bytes, from, to, this.output);
  }

  reported(): TokenUsage | undefined {
    return this.usage && responsesTokens(this.usage);
  }
}

export async function createResponse(upstream: Upstream, body: Record<string, unknown>, signal: AbortSignal): Promise<ResponseObject> {
  const text = await postForText(upstream, {
    path: openAiPath(upstream, 'responses', String(body.model)),
    body: withFields(body, { stream: false }),
    headers: openAiAuthHeaders(upstream),
    signal,
  });
  return JSON.parse(text) as ResponseObject;
}

export async function streamResponse(
  upstream: Upstream,
  body: Record<string, unknown>,
  args: { signal: AbortSignal; publicModel: string; tokenizer: TokenizerName },
): Promise<{ body: Readable; meter: ResponsesStreamMeter }> {
  const response = await postJson(upstream, {
    path: openAiPath(upstream, 'responses', String(body.model)),
    body: withFields(body, { stream: true }),
    headers: openAiAuthHeaders(upstream),
    signal: args.signal,
  });
  const meter = new ResponsesStreamMeter(args.tokenizer);
  const modelAlias = { upstream: String(body.model), public: args.publicModel };
  // Closures of this stream kind's own, not a helper shared by every kind: each call site sees one meter class.
  const observe = (event: Parameters<typeof meter.observe>[0]) => void meter.observe(event);
  // A delta of output: its piece read from the bytes, the event not parsed.
  const skim = (bytes: Buffer, from: number, to: number) => meter.skim(bytes, from, to);
  return { body: observeSseJson(response.body, observe, { modelAlias, skim }), meter };
}
