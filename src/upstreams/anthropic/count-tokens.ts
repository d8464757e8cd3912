// Anthropic's token counting (POST /v1/messages/count_tokens): free upstream too, so asked of it as sent.
import { postForText } from '../http.js';
import type { Upstream } from '../pool.js';
import { anthropicHeaders } from './client.js';

export async function countAnthropicTokens(upstream: Upstream, body: Record<string, unknown>, signal: AbortSignal): Promise<number> {
  const text = await postForText(upstream, { path: '/v1/messages/count_tokens', body, headers: anthropicHeaders(upstream), signal });
  const { input_tokens: inputTokens } = JSON.parse(text) as { input_tokens?: unknown };
  if (typeof inputTokens !== 'number') throw new Error('the upstream answered count_tokens without input_tokens');
  return inputTokens;
}
