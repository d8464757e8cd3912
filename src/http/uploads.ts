// What every upload route does before it reads a byte of the body, and how it reads the file
// part: streamed to a file under the data directory, hashed on the way, the size limit enforced
// as the bytes arrive (never a whole upload in memory).
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { requireBalanceFor } from '../billing/upload-minimum.js';
import { GatewayError, invalidRequest } from '../errors.js';
import { PARTIAL_SUFFIX } from '../files/leftovers.js';
import type { Pipeline } from '../pipeline/metered-call.js';
import type { Caller } from '../pipeline/types.js';
import type { Store } from '../store/open.js';
import { requireCaller } from './auth.js';

/** Where uploads wait while their request runs (a translation's WAV); deleted when it ends. */
export const uploadSpoolDir = (dataDir: string) => path.resolve(dataDir, 'uploads');

export const tooLarge = (message: string) => new GatewayError(413, 'invalid_request_error', message);

/**
 * Before the body: the key (already checked by the scope's onRequest hook), a store that takes
 * writes, the key's rate limit, a multipart request, and a balance that covers `minimumMicros`.
 * Each refusal is answered without reading the body (endUnreadUpload ends the connection).
 */
export async function admitUpload(deps: { pipeline: Pipeline; store: Store }, request: FastifyRequest, minimumMicros: number): Promise<Caller> {
  const caller = requireCaller(request);
  deps.pipeline.requireWritableStore();
  await deps.pipeline.admit(caller, request.log);
  if (!request.isMultipart()) throw invalidRequest('expected multipart/form-data with a file field');
  await requireBalanceFor(deps.store, { accountId: caller.accountId, minimumMicros });
  return caller;
}

// How long a refused upload's connection stays open after the answer: time for the client to read
// the answer and stop sending. Closing at once with its bytes unread would reset the connection,
// and a client still sending can lose the answer with it (it sees ECONNRESET, not a 402).
const LINGER_MS = 1_000;

/**
 * onSend for upload routes: an answer sent before the request body has been read in full (a 401,
 * 402, 429 or 413) does not wait for the rest. What still arrives is read and dropped (never kept):
 * a body that ends within LINGER_MS leaves the connection usable for the client's next request;
 * otherwise the connection is closed LINGER_MS after the answer.
 */
export const endUnreadUpload: onSendHookHandler = (request: FastifyRequest, reply: FastifyReply, payload, done) => {
  const { raw } = request;
  if (!raw.readableEnded) {
    reply.raw.once('finish', () => {
      if (raw.readableEnded) return;
      const { socket } = raw;
      // Left unread (multipart unpipes the request when it stops), the rest never ended, so the
      // timer always fired and cut off the next request a keep-alive client had sent meanwhile.
      raw.resume();
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      timer.unref();
      const stop = () => {
        clearTimeout(timer);
        raw.off('end', stop);
        socket.off('close', stop); // one per refused upload, on a socket that may serve many
      };
      raw.once('end', stop);
      socket.once('close', stop);
    });
  }
  done(null, payload);
};

/** A `file` part without a filename is a text field: the caller's mistake, said as one. */
export const fileSentAsText = (field = 'file') => invalidRequest(`${field}: must be a file (a part with a filename), not a text field`);

/**
 * The body's first file part; a text field named `file` before it is refused (400) rather than
 * passed over, so the caller learns why no file arrived. Other text fields are passed over.
 */
export async function firstFilePart(request: FastifyRequest): Promise<MultipartFile | undefined> {
  for await (const part of request.parts()) {
    if (part.type === 'file') return part;
    if (part.fieldname === 'file') throw fileSentAsText();
  }
  return undefined;
}

export interface SpooledFile {
  path: string;
  bytes: number;
  sha256: string;
}

/** Takes room for bytes before they are written: an error when there is none. */
export type ReserveBytes = (bytes: number) => Error | undefined;

/** Counts and hashes the bytes passing through, and fails past `limitBytes` or when `reserve` refuses. */
class LimitedDigest extends Transform {
  bytes = 0;
  readonly digest = createHash('sha256');
  constructor(
    private readonly limitBytes: number,
    private readonly overLimit: () => Error,
    private readonly reserve?: ReserveBytes,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
    this.bytes += chunk.length;
    if (this.bytes > this.limitBytes) return callback(this.overLimit());
    const refused = this.reserve?.(chunk.length);
    if (refused) return callback(refused);
    this.digest.update(chunk);
    callback(null, chunk);
  }
}

const partErrors = new WeakMap<MultipartFile['file'], Error | null>();

/**
 * @fastify/multipart reports a body that ends inside a file part (no closing boundary) by emitting
 * 'error' on the part's stream, once, without destroying it. Emitted while the route awaits
 * something else, nobody heard it, and the upload then waited forever for an end that never came.
 * Call as soon as the part is in hand: the error is kept for spoolFile, which throws it.
 */
export function keepPartError(part: MultipartFile): void {
  if (partErrors.has(part.file)) return;
  partErrors.set(part.file, null);
  part.file.once('error', (error) => partErrors.set(part.file, error));
}

/**
 * Streams a multipart file part to a new file in `dir` (named `<prefix>_<random>`, written as
 * `<name>.part` until the part ended whole). Past `limitBytes` (or multipart's own limit) it fails
 * with `overLimit()`; `reserve`, when given, is asked for each chunk's room before it is written.
 * On any failure the partial file is deleted. The caller owns the file it gets back.
 */
export async function spoolFile(
  part: MultipartFile,
  { dir, prefix, limitBytes, overLimit, reserve }: { dir: string; prefix: string; limitBytes: number; overLimit: () => Error; reserve?: ReserveBytes },
): Promise<SpooledFile> {
  keepPartError(part);
  await mkdir(dir, { recursive: true });
  const cutShort = partErrors.get(part.file);
  if (cutShort) throw cutShort;
  const target = path.join(dir, `${prefix}_${randomBytes(16).toString('hex')}`);
  const partial = `${target}${PARTIAL_SUFFIX}`;
  const counter = new LimitedDigest(limitBytes, overLimit, reserve);
  try {
    await pipeline(part.file, counter, createWriteStream(partial, { flags: 'wx' }));
    // multipart's own fileSize limit (limits.upload_limit_bytes) ends the part early rather than failing it.
    if (part.file.truncated) throw overLimit();
    // A part cut short may still end its stream: what arrived is not the whole file.
    const cut = partErrors.get(part.file);
    if (cut) throw cut;
    await rename(partial, target);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { path: target, bytes: counter.bytes, sha256: counter.digest.digest('hex') };
}
