// POST /v1/images/generations (JSON) and POST /v1/images/edits (multipart): OpenAI's images API,
// answered at once. Held per image at the price of the request's size and quality, settled on the
// images the upstream returned (or the tokens it reported), released on failure. The images are
// kept as files the gateway serves and join the account's gallery (files/generated-images.ts).
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Config, ModelConfig } from '../../config/schema.js';
import { invalidRequest } from '../../errors.js';
import { type GeneratedImagesDeps, type ImagesAnswerFormat, keepGeneratedImages } from '../../files/generated-images.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { CallArgs, MeteredAnswer, ResolvedModel } from '../../pipeline/types.js';
import type { Store } from '../../store/open.js';
import { generateImages } from '../../upstreams/openai-images/client.js';
import { editImages } from '../../upstreams/openai-images/edits.js';
import { imagesEstimate, imagesUnits } from '../../upstreams/openai-images/units.js';
import { requireCaller } from '../auth.js';
import { type ImageEditForm, MAX_EDIT_IMAGES, readImageEditForm } from '../image-edit-form.js';
import { type MeteredRoute, meteredHandler } from '../metered-handler.js';
import { IMAGE_SIZES, ImagesEditsSchema, ImagesGenerationsSchema } from '../schemas/images-sync.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { admitUpload, endUnreadUpload } from '../uploads.js';

export interface ImagesSyncDeps {
  pipeline: Pipeline;
  store: Store;
  dataDir: string;
  publicUrl: string;
  files: Config['files'];
  allowPrivateUrls: boolean;
  /** limits.upload_limit_bytes: each upload, and an edit's uploads together. */
  uploadLimitBytes: number;
}

/** One images call, generation or edit, as the pipeline carries it. */
interface ImagesCall {
  model: string | undefined;
  /** The caller's fields as written, sent upstream with the model's upstream name (an edit's as form text). */
  fields: Record<string, unknown>;
  prompt: string;
  n: number;
  size: string | undefined;
  quality: string | undefined;
  format: ImagesAnswerFormat;
  /** Whose gallery the images join. */
  accountId: string;
  edit?: ImageEditForm;
}

/** The size a request that names none is priced at: OpenAI's default for the models priced per image. */
const DEFAULT_PRICED_SIZE = '1024x1024';

function imagesCall(fields: Record<string, unknown>, accountId: string, edit?: ImageEditForm): ImagesCall {
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined);
  return {
    model: text('model'),
    fields,
    prompt: text('prompt') ?? '',
    n: fields.n === undefined ? 1 : Number(fields.n),
    size: text('size'),
    quality: text('quality'),
    format: text('response_format') === 'b64_json' ? 'b64_json' : 'url',
    accountId,
    edit,
  };
}

/** The price per image of the request's size and quality (`image_prices`), else the model's `price.image`. */
export function imagePrice(call: Pick<ImagesCall, 'size' | 'quality'>, model: ModelConfig): ModelConfig['price'] {
  const prices = model.image_prices;
  if (!prices) return model.price;
  const size = call.size ?? DEFAULT_PRICED_SIZE;
  const image = prices[`${size}/${call.quality}`] ?? prices[size] ?? model.price.image;
  return image === model.price.image ? model.price : { ...model.price, image };
}

/** A size OpenAI's models take, or one the model is priced at; else a 400 naming the field, before anything is held. */
function requireKnownSize(size: string | undefined, model: ResolvedModel): void {
  if (size === undefined || (IMAGE_SIZES as readonly string[]).includes(size)) return;
  const priced = Object.keys(model.config.image_prices ?? {}).map((key) => key.split('/')[0]);
  if (priced.includes(size)) return;
  const allowed = [...new Set([...IMAGE_SIZES, ...priced])].map((s) => JSON.stringify(s)).join(', ');
  throw invalidRequest(`size: must be one of ${allowed}`);
}

const asFormFields = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, String(value)]));

function imagesEndpoint(deps: ImagesSyncDeps, endpoint: string): Omit<MeteredRoute<ImagesCall>, 'readBody'> {
  const kept: GeneratedImagesDeps = {
    store: deps.store,
    dataDir: deps.dataDir,
    publicUrl: deps.publicUrl,
    ttlMs: deps.files.ttl_ms,
    maxBytes: deps.files.result_file_max_bytes,
    allowPrivateUrls: deps.allowPrivateUrls,
  };
  return {
    endpoint,
    modelType: 'image',
    price: imagePrice,
    estimate(call, model) {
      requireKnownSize(call.size, model);
      return imagesEstimate(call, model.config, call.edit?.images.length ?? 0);
    },
    // The uploads by their digests; whose account it is, by the key Idempotency-Key is scoped to.
    fingerprint: ({ fields, edit }) => ({ fields, uploads: edit?.digests }),
    async call({ body, model, signal }: CallArgs<ImagesCall>): Promise<MeteredAnswer> {
      const fields = { ...body.fields, model: model.upstreamModel };
      const result = body.edit
        ? await editImages(model.upstream, { fields: asFormFields(fields), images: body.edit.images, mask: body.edit.mask }, signal)
        : await generateImages(model.upstream, fields, signal);
      const data = await keepGeneratedImages(kept, {
        accountId: body.accountId,
        result,
        format: body.format,
        channelBaseUrl: model.upstream.channel.base_url,
        signal,
      });
      // The upstream's answer as it came (created, usage, the settings GPT image models echo), its images the gateway's.
      return { kind: 'json', body: { ...result, data }, units: imagesUnits(result) };
    },
  };
}

export const imagesSyncRoutes: FastifyPluginAsync<ImagesSyncDeps> = async (app, deps) => {
  app.post('/v1/images/generations', {
    schema: ImagesGenerationsSchema,
    ...serializedAsBuilt,
    handler: meteredHandler<ImagesCall>(deps, {
      ...imagesEndpoint(deps, 'images.generations'),
      readBody: async (request) => imagesCall(request.body as Record<string, unknown>, requireCaller(request).accountId),
    }),
  });

  // Multipart here alone, with room for an edit's images and its mask.
  await app.register(async (uploads) => {
    const parts = MAX_EDIT_IMAGES + 1 + 20;
    await uploads.register(multipart, {
      limits: { fileSize: deps.uploadLimitBytes, files: MAX_EDIT_IMAGES + 1, fields: 20, parts },
      throwFileSizeLimit: true,
    });
    const readEdit = async (request: FastifyRequest): Promise<ImagesCall> => {
      // Before a byte of the body: the key, the rate limit, a multipart request and a balance above the upload minimum.
      const caller = await admitUpload(deps, request, deps.files.upload_min_balance_micros);
      const form = await readImageEditForm(request, { limitBytes: deps.uploadLimitBytes });
      return imagesCall(form.fields, caller.accountId, form);
    };
    uploads.post('/v1/images/edits', {
      schema: ImagesEditsSchema,
      ...serializedAsBuilt,
      onSend: endUnreadUpload,
      handler: meteredHandler<ImagesCall>(deps, { ...imagesEndpoint(deps, 'images.edits'), admitsBeforeBody: true, readBody: readEdit }),
    });
  });
};
