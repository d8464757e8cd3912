// OpenAI's images API (synchronous upstream): the gateway's task engine turns it into a task.
import { postJson } from '../http.js';
import type { Upstream } from '../pool.js';

export interface ImagesResult {
  created: number;
  data: { url?: string; b64_json?: string; revised_prompt?: string }[];
  usage?: { input_tokens?: number; output_tokens?: number; total_tokens?: number } | null;
}

export async function generateImages(upstream: Upstream, body: Record<string, unknown>, signal: AbortSignal): Promise<ImagesResult> {
  const response = await postJson(upstream, {
    path: '/v1/images/generations',
    body,
    headers: upstream.channel.api_key ? { authorization: `Bearer ${upstream.channel.api_key}` } : undefined,
    signal,
  });
  return (await response.body.json()) as ImagesResult;
}
