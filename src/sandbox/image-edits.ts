import { createHash } from 'node:crypto';
import { answerImages, CONTENT_POLICY_ERROR, parseImagesRequest } from './images.js';
import { hasBearer, openAiErrorForStatus, readMultipartForm, refuseInvalid, UNAUTHORIZED } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';

// OpenAI images edits: a multipart form of one image (`image`) or several (`image[]`), an optional
// PNG mask, the prompt and the generation's fields; answered at once, as generations are.

/** The most images one edit takes (OpenAI's limit for GPT image models). */
export const MAX_EDIT_IMAGES = 16;
/** Input tokens each image sent to a per-token model counts for. */
export const TOKENS_PER_INPUT_IMAGE = 65;

export const imageEditsRoute: SandboxRoute = {
  kind: 'image-edits',
  method: 'POST',
  path: '/v1/images/edits',
  errorBody: openAiErrorForStatus,
  createsTask: true,
  handle: editImages,
};

type ImageType = 'png' | 'jpeg' | 'webp';

/** The image's type by its first bytes, as OpenAI checks an upload's content rather than its name. */
function imageTypeOf(bytes: Buffer): ImageType | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  return undefined;
}

async function editImages(ctx: SandboxContext): Promise<void> {
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
  const form = await readMultipartForm(ctx);
  if (!form) return refuseInvalid(ctx, 'body: expected multipart/form-data');
  const images = [...form.getAll('image'), ...form.getAll('image[]')];
  if (images.length === 0) return refuseInvalid(ctx, "image: required, one file (or several as 'image[]')");
  if (images.length > MAX_EDIT_IMAGES) return refuseInvalid(ctx, `image: at most ${MAX_EDIT_IMAGES} images`);
  const hash = createHash('sha256');
  for (const image of images) {
    if (typeof image === 'string') return refuseInvalid(ctx, 'image: expected a file, not a text field');
    const bytes = Buffer.from(await image.arrayBuffer());
    if (!imageTypeOf(bytes))
      return refuseInvalid(ctx, `Invalid file 'image': unsupported mimetype. Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.`);
    hash.update(bytes);
  }
  const mask = form.get('mask');
  if (mask !== null) {
    if (typeof mask === 'string' || imageTypeOf(Buffer.from(await mask.arrayBuffer())) !== 'png') return refuseInvalid(ctx, 'mask: expected a PNG file');
  }
  const text = (name: string) => {
    const value = form.get(name);
    return typeof value === 'string' ? value : undefined;
  };
  const n = text('n');
  const request = parseImagesRequest({
    model: text('model'),
    prompt: text('prompt'),
    n: n === undefined ? undefined : Number(n),
    response_format: text('response_format'),
  });
  if (typeof request === 'string') return refuseInvalid(ctx, request);
  if (ctx.fault?.task_outcome === 'failed') return ctx.reply.json(400, CONTENT_POLICY_ERROR);
  hash.update(JSON.stringify([request.model, request.prompt, request.n]));
  answerImages(ctx, request, `edit-${hash.digest('hex').slice(0, 24)}`, TOKENS_PER_INPUT_IMAGE * images.length);
}
