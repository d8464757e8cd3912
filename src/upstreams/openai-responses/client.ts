// OpenAI's responses API, passed through: a whole response, or its typed event stream.
import type { Readable } from 'node:stream';
import { postJson } from '../http.js';
import type { Upstream } from '../pool.js';
import { observeSseJson } from '../sse.js';
import type { TokenUsage } from '../openai-chat/usage.js';

export interface ResponsesUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens?: number;
}

export interface ResponseObject {
  model?: string;
  usage?: ResponsesUsage | null;
  [field: string]: unknown;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export const responsesTokens = (usage: ResponsesUsage): TokenUsage => ({ input_token: usage.input_tokens, output_token: usage.output_tokens });

/** Usage arrives in the terminal event; until then each text or argument delta counts as one token. */
export class ResponsesStreamMeter {
  usage: ResponsesUsage | undefined;
  generatedChunks = 0;
  failed = false;

  observe(event: { type?: string; response?: ResponseObject }): void {
    if (event.type && TERMINAL.has(event.type) && event.response?.usage) this.usage = event.response.usage;
    else if (event.type === 'response.output_text.delta' || event.type === 'response.function_call_arguments.delta') this.generatedChunks += 1;
    else if (event.type === 'error' || event.type === 'response.failed') this.failed = true;
  }

  /** Undefined when the upstream failed before generating anything (nothing to bill). */
  tokens(estimatedInput: number): TokenUsage | undefined {
    if (this.usage) return responsesTokens(this.usage);
    if (this.failed && this.generatedChunks === 0) return undefined;
    return { input_token: estimatedInput, output_token: this.generatedChunks };
  }
}

const authHeaders = (upstream: Upstream) => (upstream.channel.api_key ? { authorization: `Bearer ${upstream.channel.api_key}` } : undefined);

export async function createResponse(upstream: Upstream, body: Record<string, unknown>, signal: AbortSignal): Promise<ResponseObject> {
  const response = await postJson(upstream, { path: '/v1/responses', body: { ...body, stream: false }, headers: authHeaders(upstream), signal });
  return (await response.body.json()) as ResponseObject;
}

export async function streamResponse(
  upstream: Upstream,
  body: Record<string, unknown>,
  signal: AbortSignal,
  publicModel: string = String(body.model),
): Promise<{ body: Readable; meter: ResponsesStreamMeter }> {
  const response = await postJson(upstream, { path: '/v1/responses', body: { ...body, stream: true }, headers: authHeaders(upstream), signal });
  const meter = new ResponsesStreamMeter();
  const modelAlias = { upstream: String(body.model), public: publicModel };
  return { body: observeSseJson(response.body, (event) => meter.observe(event), { modelAlias }), meter };
}
