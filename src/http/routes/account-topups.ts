// The account's top-ups: redeeming a code, and the credits and debits of its ledger, in pages or
// as CSV. Registered by account.ts, inside its rate limit.
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { RedemptionConfig } from '../../config/redemption-schema.js';
import { invalidRequest } from '../../errors.js';
import type { Store } from '../../store/open.js';
import { listTopUpRows } from '../../store/topup-rows.js';
import { redeemCode } from '../../topups/redemption.js';
import { TOPUP_CSV_HEADER, topUpCsvLine, topUpView } from '../../topups/topup-views.js';
import { requireCaller } from '../auth.js';
import { decodeCursor, encodeCursor, readPage } from '../cursor.js';
import { ListTopUpsSchema, RedeemCodeSchema, TopUpsCsvSchema } from '../schemas/topups.js';

/** Rows read per query while the CSV is written: memory stays one page, however long the export. */
const CSV_PAGE_ROWS = 500;

/** The ledger id a top-ups cursor ends at (the cursor's id is the row id as digits). */
function cursorRowId(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const { id } = decodeCursor(cursor);
  if (!/^[1-9][0-9]{0,15}$/.test(id)) throw invalidRequest('cursor: not a cursor this API returned; pass next_cursor back as it came');
  return Number(id);
}

export const accountTopUpRoutes: FastifyPluginAsync<{ store: Store; redemption: RedemptionConfig }> = async (app, { store, redemption }) => {
  const db = store.db;
  const limit = { perWindow: redemption.wrong_codes_per_window, windowMs: redemption.wrong_code_window_seconds * 1_000 };

  app.post('/v1/account/redemptions', { schema: RedeemCodeSchema }, async (request) => {
    const caller = requireCaller(request);
    const { code } = request.body as { code: string };
    const redeemed = await redeemCode(store, { account: { id: caller.accountId, livemode: caller.livemode ? 1 : 0 }, code, limit });
    return { amount_micros: redeemed.amountMicros, balance_micros: redeemed.account.balance_micros, batch_id: redeemed.batchId };
  });

  app.get('/v1/account/topups', { schema: ListTopUpsSchema }, async (request) => {
    const { accountId } = requireCaller(request);
    const { limit: rows } = readPage(request.query);
    const beforeId = cursorRowId((request.query as { cursor?: string }).cursor);
    const found = await listTopUpRows(db, { accountId, beforeId, limit: rows + 1 });
    // The extra row only says that another page follows.
    const shown = found.slice(0, rows);
    const last = shown.at(-1);
    return {
      data: shown.map(topUpView),
      next_cursor: found.length > rows && last ? encodeCursor({ createdAt: last.created_at, id: String(last.id) }) : null,
    };
  });

  app.get('/v1/account/topups.csv', { schema: TopUpsCsvSchema }, async (request, reply) => {
    const { accountId } = requireCaller(request);
    reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="topups.csv"');
    return reply.send(Readable.from(topUpsCsv(store, accountId), { objectMode: false }));
  });
};

/** The CSV text a page of rows at a time, each page read once the previous one is sent. */
async function* topUpsCsv(store: Store, accountId: string): AsyncGenerator<string> {
  yield TOPUP_CSV_HEADER;
  let beforeId: number | undefined;
  for (;;) {
    const rows = await listTopUpRows(store.db, { accountId, beforeId, limit: CSV_PAGE_ROWS });
    if (rows.length > 0) yield rows.map(topUpCsvLine).join('');
    const last = rows.at(-1);
    if (rows.length < CSV_PAGE_ROWS || !last) return;
    beforeId = last.id;
  }
}
