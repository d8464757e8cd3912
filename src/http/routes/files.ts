// POST /v1/files: a multipart upload kept under the data directory, answered with a URL the
// gateway serves (unguessable, unauthenticated) so an upstream can fetch it as file_url.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyPluginAsync } from 'fastify';
import { GatewayError, invalidRequest, notFound } from '../../errors.js';
import { findFile, insertFile, type FileRow } from '../../store/files.js';
import { requireCaller } from '../auth.js';
import { runIdempotent } from '../idempotency.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import type { Store } from '../../store/open.js';

interface FilesDeps {
  store: Store;
  pipeline: Pipeline;
  dataDir: string;
  publicUrl: string;
}

const safeName = (name: string) => name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 200) || 'file';
const fileUrl = (publicUrl: string, file: Pick<FileRow, 'id' | 'filename'>) => `${publicUrl}/files/${file.id}/${encodeURIComponent(safeName(file.filename))}`;

export const fileUploadRoutes: FastifyPluginAsync<FilesDeps> = async (app, deps) => {
  const folder = path.resolve(deps.dataDir, 'files');

  app.post('/v1/files', async (request, reply) => {
    const caller = requireCaller(request);
    await deps.pipeline.admit(caller, request.log);
    if (!request.isMultipart()) throw invalidRequest('expected multipart/form-data with a file field');
    const part = await request.file();
    if (!part) throw invalidRequest('file field is required');
    if (part.fieldname !== 'file') throw invalidRequest(`${part.fieldname}: unexpected field; send the upload as file`);
    // The id is the URL's secret: 128 random bits. The bytes land under it, hashed on the way in.
    const id = `file_${randomBytes(16).toString('hex')}`;
    await mkdir(folder, { recursive: true });
    const storagePath = path.join(folder, id);
    const digest = createHash('sha256');
    let bytes = 0;
    part.file.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      digest.update(chunk);
    });
    try {
      await pipeline(part.file, createWriteStream(storagePath));
      if (part.file.truncated) throw new GatewayError(413, 'invalid_request_error', 'file: larger than the upload limit');
    } catch (error) {
      await rm(storagePath, { force: true });
      throw error;
    }
    const filename = part.filename || 'file';
    let kept = false;
    try {
      // Idempotency-Key: the same upload again answers the first file, and keeps one copy.
      return await runIdempotent({ store: deps.store, instanceId: deps.pipeline.instanceId }, request, reply, async () => {
        const row = { id, account_id: caller.accountId, filename, content_type: part.mimetype || null, bytes, storage_path: storagePath, created_at: Date.now() };
        await insertFile(deps.store.db, row);
        kept = true;
        return { statusCode: 201, body: { id, object: 'file', url: fileUrl(deps.publicUrl, row), bytes, filename, created_at: new Date(row.created_at).toISOString() } };
      }, { filename, bytes, sha256: digest.digest('hex') });
    } finally {
      if (!kept) await rm(storagePath, { force: true });
    }
  });
};

export const fileServeRoutes: FastifyPluginAsync<FilesDeps> = async (app, deps) => {
  app.get('/files/:id/:name', async (request, reply) => {
    const { id } = request.params as { id: string };
    const file = /^file_[0-9a-f]{32}$/.test(id) ? await findFile(deps.store.db, id) : undefined;
    if (!file) throw notFound('no such file');
    reply.header('content-length', String(file.bytes));
    reply.type(file.content_type ?? 'application/octet-stream');
    return reply.send(createReadStream(file.storage_path));
  });
};
