import { SANDBOX_CREATED } from './chat.js';
import { PNG_BYTES, pngFile } from './media.js';
import { hasBearer, openAiError, openAiErrorForStatus, UNAUTHORIZED } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { hashOf, isRecord, words } from './text.js';

// OpenAI images generation (chat-formats.md §5.1): synchronous, as OpenAI's is.

export const MAX_IMAGES = 10;
/** Output tokens of one image from a per-token model (what gpt-image-1 reports for a medium 1024×1024). */
export const TOKENS_PER_IMAGE = 1056;

export const imagesRoute: SandboxRoute = {
  kind: 'images',
  method: 'POST',
  path: '/v1/images/generations',
  errorBody: openAiErrorForStatus,
  createsTask: true,
  handle: generateImages,
};

export const CONTENT_POLICY_ERROR = openAiError(
  'Your request was rejected as a result of our safety system (sandbox fault: task_outcome failed).',
  'invalid_request_error',
  'content_policy_violation',
);

function generateImages(ctx: SandboxContext): void {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const request = parseImagesRequest(ctx.body);
  if (typeof request === 'string') return ctx.reply.json(400, openAiError(request, 'invalid_request_error'));
  if (ctx.fault?.task_outcome === 'failed') return ctx.reply.json(400, CONTENT_POLICY_ERROR);
  answerImages(ctx, request, hashOf(ctx.body));
}

/**
 * The images answer, generations' and edits' (image-edits.ts): n PNGs by URL or inline, and usage
 * for per-token models, whose input counts the images sent to edit (`imageTokens`).
 */
export function answerImages(ctx: SandboxContext, request: ImagesRequest, hash: string, imageTokens = 0): void {
  const data = Array.from({ length: request.n }, (_, i) =>
    request.b64 ? { b64_json: PNG_BYTES.toString('base64') } : { url: ctx.media.put(ctx.baseUrl, `image-${hash}-${i + 1}.png`, pngFile()) },
  );
  // only per-token models (gpt-image-*) report usage; per-image ones (dall-e) send none
  if (!request.model.includes('token')) return ctx.reply.json(200, { created: SANDBOX_CREATED, data });
  const text = words(request.prompt).length;
  const input = text + imageTokens;
  const output = TOKENS_PER_IMAGE * request.n;
  const usage = {
    input_tokens: input,
    input_tokens_details: { text_tokens: text, image_tokens: imageTokens },
    output_tokens: output,
    total_tokens: input + output,
  };
  ctx.reply.json(200, { created: SANDBOX_CREATED, data, usage });
}

export interface ImagesRequest {
  model: string;
  prompt: string;
  n: number;
  b64: boolean;
}

export function parseImagesRequest(body: unknown): ImagesRequest | string {
  if (!isRecord(body)) return 'body: expected a JSON object';
  const { model = 'dall-e-2', prompt, n = 1, response_format: format } = body;
  if (typeof model !== 'string' || model === '') return 'model: expected a non-empty string';
  if (typeof prompt !== 'string' || prompt === '') return 'prompt: required, a non-empty string';
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > MAX_IMAGES) return `n: expected an integer from 1 to ${MAX_IMAGES}`;
  if (format !== undefined && format !== null && format !== 'url' && format !== 'b64_json') {
    return 'response_format: expected url or b64_json';
  }
  return { model, prompt, n: n as number, b64: format === 'b64_json' };
}
