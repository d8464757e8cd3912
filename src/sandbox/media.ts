import type { SandboxContext, SandboxRoute } from './route.js';
import { SAMPLE_MP4_BYTES } from './sample-video.js';

// The files the async kinds "generate" (videos, images, minutes result files), served by the sandbox
// itself at /__media/<name>, so a gateway can fetch what an upstream's URL points at.

export const MEDIA_PREFIX = '/__media/';

interface MediaFile {
  readonly contentType: string;
  /** Built when fetched, not when registered: most result files are never downloaded. */
  readonly render: () => string | Buffer;
}

/** Past this many files the oldest is forgotten: a long-running sandbox keeps them in memory. */
export const DEFAULT_MEDIA_LIMIT = 20_000;

export class MediaStore {
  private readonly files = new Map<string, MediaFile>();

  constructor(private readonly limit = DEFAULT_MEDIA_LIMIT) {}

  /** Registers a file and answers its absolute URL on the sandbox that `baseUrl` names. */
  put(baseUrl: string, name: string, file: MediaFile): string {
    this.files.delete(name); // re-registered: now the newest
    this.files.set(name, file);
    if (this.files.size > this.limit) this.files.delete(this.files.keys().next().value as string);
    return `${baseUrl}${MEDIA_PREFIX}${encodeURIComponent(name)}`;
  }

  get(name: string): MediaFile | undefined {
    return this.files.get(name);
  }
}

/** A valid 1×1 RGBA PNG. */
export const PNG_BYTES = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/**
 * A playable MP4 (sample-video.ts) followed by a top-level `free` box carrying the name, so files
 * differ; players skip `free` boxes.
 */
export function mp4Bytes(name: string): Buffer {
  const text = Buffer.from(name, 'utf8');
  const free = Buffer.alloc(8 + text.length);
  free.writeUInt32BE(free.length, 0);
  free.write('free', 4, 'latin1');
  text.copy(free, 8);
  return Buffer.concat([SAMPLE_MP4_BYTES, free]);
}

export const pngFile = (): MediaFile => ({ contentType: 'image/png', render: () => PNG_BYTES });
export const mp4File = (name: string): MediaFile => ({ contentType: 'video/mp4', render: () => mp4Bytes(name) });
export const jsonFile = (build: () => unknown): MediaFile => ({
  contentType: 'application/json',
  render: () => JSON.stringify(build()),
});

export const mediaRoute: SandboxRoute = {
  kind: 'media',
  method: 'GET',
  path: `${MEDIA_PREFIX}:name`,
  handle: answerMedia,
};

function answerMedia(ctx: SandboxContext): void {
  const name = ctx.params.name as string;
  const file = ctx.media.get(name);
  if (!file) return ctx.reply.send(404, `no sandbox media named ${name}`, { 'content-type': 'text/plain' });
  ctx.reply.send(200, file.render(), { 'content-type': file.contentType });
}
