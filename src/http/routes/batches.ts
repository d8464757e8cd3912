// The Batch API: POST /v1/batches, GET /v1/batches/{id}, GET /v1/batches, POST
// /v1/batches/{id}/cancel, in OpenAI's shapes; and the reads of an account's own files (a batch's
// input, output and error files): GET /v1/files/{id} and GET /v1/files/{id}/content.
import { open, readFile } from 'node:fs/promises';
import type { FastifyPluginAsync } from 'fastify';
import { type BatchEndpoint, parseBatchInput } from '../../batches/input-file.js';
import type { BatchRunner } from '../../batches/runner.js';
import { batchView, newBatchId } from '../../batches/views.js';
import { conflict, invalidRequest, notFound } from '../../errors.js';
import { isFileId } from '../../files/urls.js';
import type { Pipeline } from '../../pipeline/metered-call.js';
import { countLines, endPendingLines } from '../../store/batch-lines.js';
import { type BatchRow, findAccountBatch, findAccountFileWithPurpose, insertBatch, listAccountBatches, markCancelling } from '../../store/batches.js';
import type { Store } from '../../store/open.js';
import { readHttpUrl } from '../../tasks/fields.js';
import { requireCaller } from '../auth.js';
import { attachmentDisposition, FILE_SECURITY_HEADERS } from '../file-headers.js';
import { BatchCancelSchema, BatchCreateSchema, BatchGetSchema, BatchListSchema, FileContentSchema, FileGetSchema } from '../schemas/batches.js';
import { serializedAsBuilt } from '../serialized-as-built.js';

export interface BatchRouteDeps {
  store: Store;
  pipeline: Pipeline;
  /** Told of a new or cancelled batch; absent, the runner finds it at its next pass. */
  runner?: Pick<BatchRunner, 'wake'>;
}

const COMPLETION_WINDOW_MS = 24 * 60 * 60 * 1000;
const DEFAULT_LIST_LIMIT = 20;

interface CreateBody {
  input_file_id: string;
  endpoint: BatchEndpoint;
  completion_window: '24h';
  metadata?: Record<string, string> | null;
  callback_url?: string;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

export const batchRoutes: FastifyPluginAsync<BatchRouteDeps> = async (app, deps) => {
  const { store, pipeline } = deps;
  const viewOf = async (rows: BatchRow[]) => {
    const counts = await countLines(
      store.db,
      rows.map((row) => row.id),
    );
    return rows.map((row) => batchView(row, counts.get(row.id)!));
  };

  app.post('/v1/batches', { schema: BatchCreateSchema, ...serializedAsBuilt }, async (request) => {
    const caller = requireCaller(request);
    pipeline.requireWritableStore();
    await pipeline.admit(caller, request.log);
    const body = request.body as CreateBody;
    const callbackUrl = readHttpUrl(body as unknown as Record<string, unknown>, 'callback_url');
    const now = Date.now();
    const file = isFileId(body.input_file_id)
      ? await findAccountFileWithPurpose(store.db, { accountId: caller.accountId, id: body.input_file_id, now })
      : undefined;
    if (!file) throw invalidRequest(`input_file_id: no file ${body.input_file_id} in this account`);
    if (file.purpose !== 'batch') throw invalidRequest(`input_file_id: file ${file.id} was not uploaded with purpose "batch"`);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(await readFile(file.storage_path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw invalidRequest(`input_file_id: no file ${file.id} in this account`);
      throw invalidRequest('input_file_id: the file is not UTF-8 text; it must be JSONL');
    }
    const lines = parseBatchInput(text, body.endpoint);
    const row = {
      id: newBatchId(),
      account_id: caller.accountId,
      key_id: caller.keyId,
      livemode: caller.livemode ? 1 : 0,
      endpoint: body.endpoint,
      input_file_id: file.id,
      completion_window: body.completion_window,
      status: 'in_progress',
      metadata: body.metadata ? JSON.stringify(body.metadata) : null,
      callback_url: callbackUrl ?? null,
      output_file_id: null,
      error_file_id: null,
      created_at: now,
      in_progress_at: now,
      expires_at: now + COMPLETION_WINDOW_MS,
      finalizing_at: null,
      completed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      lease_owner: null,
      lease_until: null,
    };
    await insertBatch(store.db, row, lines);
    deps.runner?.wake();
    request.log.info({ batchId: row.id, lines: lines.length, endpoint: row.endpoint }, 'batch created');
    return (await viewOf([row]))[0];
  });

  app.get('/v1/batches/:id', { schema: BatchGetSchema, ...serializedAsBuilt }, async (request) => {
    const caller = requireCaller(request);
    await pipeline.admit(caller, request.log);
    const { id } = request.params as { id: string };
    const batch = await findAccountBatch(store.db, { accountId: caller.accountId, id });
    if (!batch) throw notFound(`batch ${id} not found`);
    return (await viewOf([batch]))[0];
  });

  app.get('/v1/batches', { schema: BatchListSchema, ...serializedAsBuilt }, async (request) => {
    const caller = requireCaller(request);
    await pipeline.admit(caller, request.log);
    const query = request.query as { limit?: string; after?: string };
    const limit = query.limit === undefined ? DEFAULT_LIST_LIMIT : Number(query.limit);
    let olderThan: { createdAt: number; id: string } | undefined;
    if (query.after !== undefined) {
      const after = await findAccountBatch(store.db, { accountId: caller.accountId, id: query.after });
      if (!after) throw invalidRequest(`after: no batch ${query.after} in this account`);
      olderThan = { createdAt: after.created_at, id: after.id };
    }
    const rows = await listAccountBatches(store.db, { accountId: caller.accountId, olderThan, limit: limit + 1 });
    const data = await viewOf(rows.slice(0, limit));
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
  });

  app.post('/v1/batches/:id/cancel', { schema: BatchCancelSchema, ...serializedAsBuilt }, async (request) => {
    const caller = requireCaller(request);
    pipeline.requireWritableStore();
    await pipeline.admit(caller, request.log);
    const { id } = request.params as { id: string };
    const now = Date.now();
    let batch = await markCancelling(store.db, { accountId: caller.accountId, id, now });
    if (batch) {
      // Pending lines are never run from here on; running ones finish (runner.ts).
      await endPendingLines(store.db, { batchId: id, now, status: 'cancelled' });
      deps.runner?.wake();
    } else {
      batch = await findAccountBatch(store.db, { accountId: caller.accountId, id });
      if (!batch) throw notFound(`batch ${id} not found`);
      if (batch.status !== 'cancelling' && batch.status !== 'cancelled') {
        throw conflict(`batch ${id} is ${batch.status}; only a batch in progress can be cancelled`);
      }
    }
    return (await viewOf([batch]))[0];
  });

  app.get('/v1/files/:id', { schema: FileGetSchema, ...serializedAsBuilt }, async (request) => {
    const caller = requireCaller(request);
    await pipeline.admit(caller, request.log);
    const { id } = request.params as { id: string };
    const file = isFileId(id) ? await findAccountFileWithPurpose(store.db, { accountId: caller.accountId, id, now: Date.now() }) : undefined;
    if (!file) throw notFound(`file ${id} not found`);
    return {
      id: file.id,
      object: 'file',
      bytes: file.bytes,
      filename: file.filename,
      purpose: file.purpose,
      status: 'processed',
      created_at: seconds(file.created_at),
      expires_at: seconds(file.expires_at),
    };
  });

  app.get('/v1/files/:id/content', { schema: FileContentSchema, ...serializedAsBuilt }, async (request, reply) => {
    const caller = requireCaller(request);
    await pipeline.admit(caller, request.log);
    const { id } = request.params as { id: string };
    const file = isFileId(id) ? await findAccountFileWithPurpose(store.db, { accountId: caller.accountId, id, now: Date.now() }) : undefined;
    const handle = file && (await open(file.storage_path, 'r').catch(() => undefined));
    if (!file || !handle) throw notFound(`file ${id} not found`);
    const { size } = await handle.stat().catch(async (error: unknown) => {
      await handle.close();
      throw error;
    });
    reply.headers({
      'content-length': String(size),
      'content-type': file.purpose === 'batch_output' || file.purpose === 'batch' ? 'application/jsonl' : 'application/octet-stream',
      'content-disposition': attachmentDisposition(file.filename),
      ...FILE_SECURITY_HEADERS,
    });
    return reply.send(handle.createReadStream());
  });
};
