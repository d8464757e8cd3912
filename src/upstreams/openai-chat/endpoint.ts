// Where an OpenAI-style call goes and how it authenticates: OpenAI and its look-alikes take
// `/v1/...` with a bearer key; Azure OpenAI takes its deployment paths with `api-version` (the
// deployment is the model's upstream id), or its v1 path, and the key in `api-key`.
import type { Upstream } from '../pool.js';

export type OpenAiOperation = 'chat/completions' | 'responses' | 'embeddings' | 'completions' | 'moderations' | 'rerank';

export function openAiPath(upstream: Upstream, operation: OpenAiOperation, model: string): string {
  const { channel } = upstream;
  if (channel.kind !== 'azure') return `/v1/${operation}`;
  if (channel.api_version === undefined) return `/openai/v1/${operation}`;
  const version = `api-version=${encodeURIComponent(channel.api_version)}`;
  // The responses API is not per deployment on Azure: its model field names the deployment.
  if (operation === 'responses') return `/openai/responses?${version}`;
  return `/openai/deployments/${encodeURIComponent(model)}/${operation}?${version}`;
}

export function openAiAuthHeaders(upstream: Upstream): Record<string, string> | undefined {
  const key = upstream.channel.api_key;
  if (!key) return undefined;
  return upstream.channel.kind === 'azure' ? { 'api-key': key } : { authorization: `Bearer ${key}` };
}
