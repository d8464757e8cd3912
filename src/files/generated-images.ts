// Images an upstream generated for an answered-at-once images call: each one's bytes (decoded from
// b64_json, or fetched from the upstream's URL under the URL policy) kept as a file the gateway
// serves, and joined to the account's gallery (GET /v1/assets?kind=image). An upstream's URL lasts
// an hour; the gateway's lasts as long as its uploads do (files.ttl_ms).
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Insertable } from 'kysely';
import { safeRequest } from '../net/safe-request.js';
import { insertAssets } from '../store/assets.js';
import { insertFile } from '../store/files.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/open.js';
import type { FilesTable } from '../store/schema.js';
import { MalformedAnswerError } from '../upstreams/malformed.js';
import type { ImagesResult } from '../upstreams/openai-images/client.js';
import { PARTIAL_SUFFIX, storedFilesDir } from './leftovers.js';
import { fileUrl } from './urls.js';

export interface GeneratedImagesDeps {
  store: Store;
  dataDir: string;
  publicUrl: string;
  /** `files.ttl_ms`: how long the gateway serves a kept image. */
  ttlMs: number;
  /** `files.result_file_max_bytes`: the largest image fetched from an upstream's URL. */
  maxBytes: number;
  /** `network.allow_private_urls`. */
  allowPrivateUrls: boolean;
}

export type ImagesAnswerFormat = 'url' | 'b64_json';
type ImageEntry = ImagesResult['data'][number];

const FETCH_TIMEOUT_MS = 60_000;
const IMAGE_TYPES = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;
export type ImageType = keyof typeof IMAGE_TYPES;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** An image's type by its first bytes (PNG, JPEG, WebP), whatever its name or declared type says. */
export function imageTypeOf(bytes: Buffer): ImageType | undefined {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  return undefined;
}

export const imageContentType = (type: ImageType) => IMAGE_TYPES[type];

/**
 * One image's bytes. A URL on the channel's own origin is the channel's (a sandbox or a proxy the
 * operator configured, possibly on a private address); any other is fetched as a user-supplied URL.
 */
async function bytesOf(image: ImageEntry, deps: GeneratedImagesDeps, channelOrigin: string, signal: AbortSignal): Promise<Buffer> {
  if (typeof image.b64_json === 'string') return Buffer.from(image.b64_json, 'base64');
  const url = image.url as string;
  const own = URL.canParse(url) && new URL(url).origin === channelOrigin;
  const response = await safeRequest(url, {
    field: 'the upstream image URL',
    signal,
    allowPrivate: deps.allowPrivateUrls || own,
    timeoutMs: FETCH_TIMEOUT_MS,
    maxResponseBytes: deps.maxBytes,
  });
  if (response.status !== 200) throw new Error(`the upstream image URL answered ${response.status}`);
  if (response.truncated) throw new Error(`the upstream image is larger than ${deps.maxBytes} bytes`);
  return response.body;
}

/** Written as `<name>.part` and renamed once whole, as uploads are (a crash leaves only a `.part`). */
async function writeImage(dir: string, bytes: Buffer): Promise<{ id: string; storagePath: string }> {
  const id = `file_${randomBytes(16).toString('hex')}`;
  const storagePath = path.join(dir, id);
  const partial = `${storagePath}${PARTIAL_SUFFIX}`;
  try {
    await writeFile(partial, bytes, { flag: 'wx' });
    await rename(partial, storagePath);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { id, storagePath };
}

export interface GeneratedImages {
  /** Whose files and gallery they join. */
  accountId: string;
  result: ImagesResult;
  format: ImagesAnswerFormat;
  /** The channel that answered: an image URL on its origin is its own. */
  channelBaseUrl: string;
  signal: AbortSignal;
}

/**
 * Keeps the upstream's images for the account and answers them in `format`: the gateway's own URL,
 * or the bytes inline. Every image joins the gallery either way. Throws, keeping nothing, when an
 * image cannot be read or is not an image: the call then fails, and is not paid for.
 */
export async function keepGeneratedImages(deps: GeneratedImagesDeps, call: GeneratedImages): Promise<ImageEntry[]> {
  const { accountId, result, format, channelBaseUrl, signal } = call;
  const channelOrigin = new URL(channelBaseUrl).origin;
  const images = await Promise.all(
    result.data.map(async (image) => {
      const bytes = await bytesOf(image, deps, channelOrigin, signal);
      const type = imageTypeOf(bytes);
      if (!type) throw new MalformedAnswerError('the images upstream answered an image that is not PNG, JPEG or WebP');
      return { image, bytes, type };
    }),
  );
  const dir = storedFilesDir(deps.dataDir);
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  try {
    const now = Date.now();
    const files: Insertable<FilesTable>[] = [];
    for (const [index, { bytes, type }] of images.entries()) {
      const { id, storagePath } = await writeImage(dir, bytes);
      written.push(storagePath);
      const filename = `image-${index + 1}.${type === 'jpeg' ? 'jpg' : type}`;
      files.push({
        id,
        account_id: accountId,
        filename,
        content_type: imageContentType(type),
        bytes: bytes.length,
        storage_path: storagePath,
        created_at: now,
        expires_at: now + deps.ttlMs,
      });
    }
    const urls = files.map((file) => fileUrl(deps.publicUrl, file));
    await deps.store.db.transaction().execute(async (trx) => {
      for (const file of files) await insertFile(trx, file);
      await insertAssets(
        trx,
        urls.map((url) => ({ id: newId('asset'), account_id: accountId, kind: 'image' as const, url, task_id: null, source_task_id: null, created_at: now })),
      );
    });
    return images.map(({ image, bytes }, index) => {
      const revised = typeof image.revised_prompt === 'string' ? { revised_prompt: image.revised_prompt } : {};
      return format === 'b64_json' ? { b64_json: bytes.toString('base64'), ...revised } : { url: urls[index] as string, ...revised };
    });
  } catch (error) {
    await Promise.all(written.map((file) => rm(file, { force: true })));
    throw error;
  }
}
