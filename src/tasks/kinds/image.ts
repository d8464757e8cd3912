// Async image generation: the engine runs the upstream's synchronous images call itself, so a
// caller never holds a connection open for a slow generation.
import type { Units } from '../../billing/prices.js';
import { UpstreamHttpError } from '../../upstreams/http.js';
import { generateImages } from '../../upstreams/openai-images/client.js';
import type { TaskKindHandler } from '../types.js';

export interface ImageTaskRequest {
  model: string;
  prompt: string;
  n?: number;
  [field: string]: unknown;
}

export function imageHandler({ publicUrl }: { publicUrl: string }): TaskKindHandler {
  const resultUrl = (id: string) => `${publicUrl}/v1/images/async/${id}`;
  return {
    kind: 'image',
    webhookType: 'image',
    submit: async () => ({ upstreamId: null }),
    async poll(task, model, { signal, markProcessing }) {
      // callback_url is ours (the gateway calls back), not the upstream's.
      const { callback_url: _callback, ...request } = JSON.parse(task.request) as ImageTaskRequest & { callback_url?: string };
      await markProcessing();
      try {
        const result = await generateImages(model.upstream, { ...request, model: model.upstreamModel }, signal);
        const urls = result.data.map((image) => image.url).filter((url): url is string => typeof url === 'string');
        // Per image, and per token too for models that report tokens.
        const units: Units = { image: result.data.length };
        if (result.usage) Object.assign(units, { input_token: result.usage.input_tokens ?? 0, output_token: result.usage.output_tokens ?? 0 });
        return {
          state: 'succeeded',
          result: { created: result.created, data: result.data, ...(result.usage && { usage: result.usage }) },
          units,
          assets: urls.map((url) => ({ kind: 'image' as const, url })),
          webhook: { result_url: resultUrl(task.id) },
        };
      } catch (error) {
        // A refusal is final (and refunded); a broken connection is retried by the engine.
        if (error instanceof UpstreamHttpError) {
          return { state: 'failed', error: { code: 'upstream_error', message: error.reason() ?? `the upstream answered ${error.statusCode}` }, webhook: { result_url: resultUrl(task.id) } };
        }
        throw error;
      }
    },
  };
}
