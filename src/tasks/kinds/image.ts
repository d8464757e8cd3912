// Async image generation: the engine runs the upstream's synchronous images call itself, so a
// caller never holds a connection open for a slow generation.
import { UpstreamHttpError } from '../../upstreams/http.js';
import { generateImages, type ImagesResult } from '../../upstreams/openai-images/client.js';
import { imagesUnits } from '../../upstreams/openai-images/units.js';
import type { TaskError, TaskKindHandler } from '../types.js';

export interface ImageTaskRequest {
  model: string;
  prompt: string;
  n?: number;
  [field: string]: unknown;
}

/**
 * An error status after which asking again cannot help: the upstream refused the request itself
 * (400, 404, 413, 422…) or the gateway's credentials (401, 403). A 408, a 429 and a 5xx are
 * passing trouble, worth another attempt.
 */
function isFinalRefusal(statusCode: number): boolean {
  return statusCode >= 400 && statusCode < 500 && statusCode !== 408 && statusCode !== 429;
}

function refusalError(error: UpstreamHttpError): TaskError {
  // the gateway's own key was refused: the caller's request is not at fault, and is not told the upstream's text
  if (error.statusCode === 401 || error.statusCode === 403) return { code: 'upstream_error', message: "the upstream refused the gateway's credentials" };
  return { code: 'upstream_error', message: error.reason() ?? `the upstream answered ${error.statusCode}` };
}

export function imageHandler({ publicUrl }: { publicUrl: string }): TaskKindHandler {
  const resultUrl = (id: string) => `${publicUrl}/v1/images/async/${id}`;
  return {
    kind: 'image',
    webhookType: 'image',
    submit: async () => ({ upstreamId: null }),
    async poll(task, model, { signal, startGeneration }) {
      // callback_url is ours (the gateway calls back), not the upstream's.
      const { callback_url: _callback, ...request } = JSON.parse(task.request) as ImageTaskRequest & { callback_url?: string };
      // Every call may generate (and be paid for) upstream, whatever comes back: counted first.
      await startGeneration();
      let result: ImagesResult;
      try {
        result = await generateImages(model.upstream, { ...request, model: model.upstreamModel }, signal);
      } catch (error) {
        // A refusal is final (and refunded). A broken connection, a timeout, a 5xx, a 429 or a
        // malformed 200 is thrown: the engine tries again, within the attempts allowed.
        if (error instanceof UpstreamHttpError && isFinalRefusal(error.statusCode)) {
          return { state: 'failed', error: refusalError(error), webhook: { result_url: resultUrl(task.id) } };
        }
        throw error;
      }
      const urls = result.data.map((image) => image.url).filter((url): url is string => typeof url === 'string');
      const units = imagesUnits(result);
      return {
        state: 'succeeded',
        result: { created: result.created, data: result.data, ...(result.usage && { usage: result.usage }) },
        units,
        assets: urls.map((url) => ({ kind: 'image' as const, url })),
        webhook: { result_url: resultUrl(task.id) },
      };
    },
  };
}
