// The account's usage (in pages, or every row as CSV) and its spend summed per day or model.
// Registered by account.ts, inside its rate limit.
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import { spendByDayView, spendByModelView, USAGE_CSV_HEADER, usageCsvLine } from '../../account/views.js';
import { usageView } from '../../admin/views.js';
import { notFound } from '../../errors.js';
import { listAccountKeys } from '../../store/api-keys.js';
import type { Position } from '../../store/keyset.js';
import type { Store } from '../../store/open.js';
import type { DB } from '../../store/schema.js';
import { listUsage, spendByDay, spendByModel, type UsageFilter } from '../../store/usage.js';
import { requireCaller } from '../auth.js';
import { readPage, toPage } from '../cursor.js';
import { SpendSchema, UsageSchema } from '../schemas/account.js';
import { readInstant } from '../schemas/query.js';

interface UsageQuery {
  model?: string;
  endpoint?: string;
  key_id?: string;
  format?: 'json' | 'csv';
}

/** Rows read per query while the CSV is written: memory stays one page, however long the export. */
const CSV_PAGE_ROWS = 500;

/** The time range of `from` (inclusive) and `to` (exclusive), as the store filters it. */
const readTimeRange = (query: unknown) => ({ fromMs: readInstant(query, 'from'), toMs: readInstant(query, 'to') });

async function readUsageFilter(db: Kysely<DB>, accountId: string, query: UsageQuery): Promise<UsageFilter> {
  const { model, endpoint, key_id: keyId } = query;
  // Filtering by another account's key would only find nothing, but answers 404 like every other
  // foreign id, so a typo is told apart from a key that made no calls.
  if (keyId !== undefined && (await listAccountKeys(db, { accountId, keyId })).length === 0) throw notFound(`key ${keyId} not found`);
  return { accountId, ...readTimeRange(query), model, endpoint, keyId };
}

/** The CSV text in pieces, a page of rows at a time, each page read only when the previous one has been sent. */
async function* usageCsv(db: Kysely<DB>, filter: UsageFilter, livemode: boolean): AsyncGenerator<string> {
  yield USAGE_CSV_HEADER;
  let olderThan: Position | undefined;
  for (;;) {
    const rows = await listUsage(db, { ...filter, limit: CSV_PAGE_ROWS, olderThan });
    if (rows.length > 0) yield rows.map((row) => usageCsvLine(row, livemode)).join('');
    const last = rows.at(-1);
    if (rows.length < CSV_PAGE_ROWS || !last) return;
    olderThan = { createdAt: last.created_at, id: last.id };
  }
}

export const accountUsageRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const db = store.db;

  app.get('/v1/account/usage', { schema: UsageSchema }, async (request, reply) => {
    const query = request.query as UsageQuery;
    const caller = requireCaller(request);
    const filter = await readUsageFilter(db, caller.accountId, query);
    if (query.format === 'csv') {
      reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="usage.csv"');
      // Pulled by the response as it drains; a caller that leaves ends the reading.
      return reply.send(Readable.from(usageCsv(db, filter, caller.livemode), { objectMode: false }));
    }
    const { limit, olderThan } = readPage(query);
    return toPage(await listUsage(db, { ...filter, limit: limit + 1, olderThan }), limit, (row) => usageView(row, caller.livemode));
  });

  app.get('/v1/account/spend', { schema: SpendSchema }, async (request) => {
    const filter = { accountId: requireCaller(request).accountId, ...readTimeRange(request.query) };
    const { group_by: groupBy = 'day' } = request.query as { group_by?: 'day' | 'model' };
    if (groupBy === 'model') return { data: (await spendByModel(db, filter)).map(spendByModelView) };
    return { data: (await spendByDay(db, filter)).map(spendByDayView) };
  });
};
