// POST /v1/files: a multipart upload kept under the data directory, answered with a URL the
// gateway serves (unguessable, unauthenticated) so an upstream can fetch it as file_url.
// Bounded: a per-file limit and a per-account quota, enforced while the bytes stream to disk, and
// an expiry after which the sweep deletes the file. DELETE /v1/files/{id} removes one sooner.
// Served as a download that no browser runs (file-headers.ts).
import { type FileHandle, open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { fileUpload } from '../../batches/upload-purpose.js';
import type { Config } from '../../config/schema.js';
import { invalidRequest, notFound } from '../../errors.js';
import { storedFilesDir } from '../../files/leftovers.js';
import { storeFileWithinQuota } from '../../files/quota.js';
import { createUploadRooms } from '../../files/upload-room.js';
import { fileUrl, isFileId } from '../../files/urls.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { accountFileBytes, deleteFile, findAccountFile, findFile } from '../../store/files.js';
import type { Store } from '../../store/open.js';
import { requireCaller } from '../auth.js';
import { attachmentDisposition, FILE_SECURITY_HEADERS, servedContentType } from '../file-headers.js';
import { runIdempotent } from '../idempotency.js';
import { requireNoNul } from '../nul-guard.js';
import { FileDeleteSchema, FileServeSchema, FileUploadSchema } from '../schemas/files.js';
import { serializedAsBuilt } from '../serialized-as-built.js';
import { admitUpload, endUnreadUpload, spoolFile, tooLarge } from '../uploads.js';

export interface FilesDeps {
  store: Store;
  pipeline: Pipeline;
  dataDir: string;
  publicUrl: string;
  files: Config['files'];
  /** multipart's own limit on any upload (limits.upload_limit_bytes). */
  uploadLimitBytes: number;
}

const quotaFull = (quotaBytes: number) =>
  tooLarge(`file: the account's file storage of ${quotaBytes} bytes would be exceeded; delete files (DELETE /v1/files/{id}) or wait for them to expire`);

export const fileUploadRoutes: FastifyPluginAsync<FilesDeps> = async (app, deps) => {
  const folder = storedFilesDir(deps.dataDir);
  const { files } = deps;
  const maxFileBytes = Math.min(files.max_file_bytes, deps.uploadLimitBytes);
  const rooms = createUploadRooms({ quotaBytes: files.max_bytes_per_account });

  app.post('/v1/files', { schema: FileUploadSchema, ...serializedAsBuilt, onSend: endUnreadUpload }, async (request, reply) => {
    // Storing a file is free; an account that cannot pay for anything may not fill the disk either.
    const caller = await admitUpload(deps, request, files.upload_min_balance_micros);
    // The room is taken as the bytes arrive, before they are written, shared with the account's
    // other uploads in flight: side by side they never put more than the quota on the disk.
    const declaredBytes = Number(request.headers['content-length']) || 0; // the file and its multipart framing
    const room = await rooms.open(caller.accountId, {
      claimBytes: Math.min(declaredBytes, maxFileBytes),
      readUsedBytes: () => accountFileBytes(deps.store.db, { accountId: caller.accountId, now: Date.now() }),
    });
    let kept = false;
    let spooledPath: string | undefined;
    try {
      // A full quota is refused before the body; otherwise the upload may take what room is left.
      if (room.freeBytes() <= 0) throw quotaFull(files.max_bytes_per_account);
      // The file, and its `purpose` (OpenAI's Files API; `batch` for a batch's input) before or after it.
      const upload = await fileUpload(request);
      if (!upload) throw invalidRequest('file field is required');
      const { part } = upload;
      if (part.fieldname !== 'file') throw invalidRequest(`${part.fieldname}: unexpected field; send the upload as file`);
      requireNoNul('filename', part.filename);
      requireNoNul('file: Content-Type', part.mimetype);
      // The id is the URL's secret: 128 random bits, and the name of the file on disk.
      const spooled = await spoolFile(part, {
        dir: folder,
        prefix: 'file',
        limitBytes: maxFileBytes,
        overLimit: () => tooLarge(`file: larger than the limit of ${maxFileBytes} bytes`),
        reserve: (bytes) => (room.take(bytes) ? undefined : quotaFull(files.max_bytes_per_account)),
      });
      spooledPath = spooled.path;
      const purpose = await upload.purpose();
      const id = path.basename(spooled.path);
      const filename = part.filename || 'file';
      // Idempotency-Key: the same upload again answers the first file, and keeps one copy.
      return await runIdempotent(
        { store: deps.store, instanceId: deps.pipeline.instanceId },
        request,
        reply,
        async () => {
          const now = Date.now();
          const row = {
            id,
            account_id: caller.accountId,
            filename,
            content_type: part.mimetype || null,
            bytes: spooled.bytes,
            storage_path: spooled.path,
            created_at: now,
            expires_at: now + files.ttl_ms,
            purpose,
          };
          // Checked again as the row goes in: uploads on other instances share the room left too.
          const outcome = await storeFileWithinQuota(deps.store, { row, quotaBytes: files.max_bytes_per_account, now });
          if (!outcome.stored) throw quotaFull(files.max_bytes_per_account);
          kept = true;
          return {
            statusCode: 201,
            body: {
              id,
              object: 'file',
              url: fileUrl(deps.publicUrl, row),
              bytes: row.bytes,
              filename,
              created_at: new Date(row.created_at).toISOString(),
              expires_at: new Date(row.expires_at).toISOString(),
              ...(purpose !== null && { purpose, status: 'processed' }),
            },
          };
        },
        { filename, bytes: spooled.bytes, sha256: spooled.sha256, ...(purpose !== null && { purpose }) },
      );
    } finally {
      if (!kept && spooledPath) await rm(spooledPath, { force: true });
      room.close({ kept });
    }
  });

  app.delete('/v1/files/:id', { schema: FileDeleteSchema, ...serializedAsBuilt }, async (request) => {
    const caller = requireCaller(request);
    await deps.pipeline.admit(caller, request.log);
    const { id } = request.params as { id: string };
    // Another account's file is answered exactly like a missing one.
    const file = isFileId(id) ? await findAccountFile(deps.store.db, { accountId: caller.accountId, id, now: Date.now() }) : undefined;
    if (!file) throw notFound(`file ${id} not found`);
    // The bytes first: if the row outlived them (a crash), serving answers 404 and the sweep ends it.
    await rm(file.storage_path, { force: true });
    await deleteFile(deps.store.db, id);
    return { id, object: 'file', deleted: true };
  });
};

export const fileServeRoutes: FastifyPluginAsync<Pick<FilesDeps, 'store'>> = async (app, deps) => {
  app.get('/files/:id/:name', { schema: FileServeSchema, ...serializedAsBuilt }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const file = isFileId(id) ? await findFile(deps.store.db, { id, now: Date.now() }) : undefined;
    const handle = file && (await openIfPresent(file.storage_path));
    if (!file || !handle) throw notFound('no such file');
    const { size } = await handle.stat().catch(async (error: unknown) => {
      await handle.close();
      throw error;
    });
    reply.headers({
      'content-length': String(size),
      'content-type': servedContentType(file.content_type),
      'content-disposition': attachmentDisposition(file.filename),
      ...FILE_SECURITY_HEADERS,
    });
    // The stream closes the handle when it ends or the client leaves.
    return reply.send(handle.createReadStream());
  });
};

async function openIfPresent(storagePath: string): Promise<FileHandle | undefined> {
  try {
    return await open(storagePath, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
