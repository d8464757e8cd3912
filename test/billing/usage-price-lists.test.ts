// Each usage row names the price list its call was billed at (usage.price_id), the list kept once in
// price_lists and read back beside the row's units. On SQLite and on PostgreSQL, through each way a
// settle reaches the store: a hold written with its settle (a plain call), a hold written before
// (a stream's), settles batched together, and the transaction step.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/billing/accounts.js';
import { holdFunds, holdFundsAtOnce, settleHold } from '../../src/billing/ledger.js';
import { priceListId } from '../../src/billing/price-lists.js';
import type { Price } from '../../src/config/schema.js';
import { listUsage } from '../../src/store/usage.js';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';
import { type StoreContext, storePerTest } from '../store/store-context.js';

const CHAT: Price = { input_token: 2_000_000, output_token: 8_000_000 };
const LONG_CONTEXT: Price = { input_token: 1_250_000, output_token: 10_000_000, tiers: [{ above_input_tokens: 200_000, input_token: 2_500_000 }] };
const UNITS = { input_token: 100, output_token: 50 };

function priceListContract(ctx: StoreContext): void {
  const funded = async () => (await createAccount(ctx.store(), { name: 'acme', creditMicros: 1_000_000 })).id;
  const call = (accountId: string) => ({ accountId, amountMicros: 10_000, requestId: 'req_1', model: 'chat-small', endpoint: 'chat.completions' });
  const rowsOf = async (accountId: string) =>
    (await listUsage(ctx.store().db, { accountId })).map((row) => ({ price_id: row.price_id, prices: row.prices && JSON.parse(row.prices) }));
  const priceListCount = async () => Number((await sql<{ n: number }>`select count(*) as n from price_lists`.execute(ctx.store().db)).rows[0]!.n);

  /** A call held at once and settled at `prices`; `stream` writes its hold first, as a stream's is before its first byte. */
  async function billedCall(accountId: string, prices: Price, { stream = false } = {}) {
    const held = await holdFundsAtOnce(ctx.store(), call(accountId));
    if (stream) await held.write?.();
    return settleHold(ctx.store(), held.holdId, { chargeMicros: 600, units: UNITS, prices });
  }

  test('a plain call’s usage row names the price list it was billed at', async () => {
    const accountId = await funded();
    await billedCall(accountId, CHAT);
    assert.deepEqual(await rowsOf(accountId), [{ price_id: priceListId(CHAT), prices: CHAT }]);
  });

  test('a streamed call’s usage row names the price list it was billed at', async () => {
    const accountId = await funded();
    await billedCall(accountId, LONG_CONTEXT, { stream: true });
    assert.deepEqual(await rowsOf(accountId), [{ price_id: priceListId(LONG_CONTEXT), prices: LONG_CONTEXT }]);
  });

  test('settles written together each name their own call’s price list', async () => {
    const accountId = await funded();
    const lists = [CHAT, LONG_CONTEXT, CHAT, LONG_CONTEXT, CHAT, LONG_CONTEXT];
    await Promise.all(lists.map((prices) => billedCall(accountId, prices)));
    const named = (await rowsOf(accountId)).map((row) => row.price_id).sort();
    assert.deepEqual(named, lists.map(priceListId).sort());
  });

  test('a settle the transaction step decides (a spend-capped key’s) names its price list too', async () => {
    const accountId = await funded();
    const keyLimits = { allowedModels: null, dailyCapMicros: 1_000_000, monthlyCapMicros: null, expiresAt: null };
    const held = await holdFunds(ctx.store(), { ...call(accountId), keyId: 'key_capped', keyLimits });
    await settleHold(ctx.store(), held.holdId, { chargeMicros: 600, units: UNITS, prices: CHAT });
    assert.deepEqual(await rowsOf(accountId), [{ price_id: priceListId(CHAT), prices: CHAT }]);
  });

  test('two calls at the same prices share one price_lists row', async () => {
    const accountId = await funded();
    await billedCall(accountId, CHAT);
    await billedCall(accountId, { ...CHAT }); // an equal list, another object (a price book's copy)
    const [first, second] = await rowsOf(accountId);
    assert.equal(first!.price_id, second!.price_id);
    assert.equal(await priceListCount(), 1);
  });

  test('calls to models at different prices each show their own prices', async () => {
    const accountId = await funded();
    await billedCall(accountId, CHAT);
    await billedCall(accountId, LONG_CONTEXT);
    assert.deepEqual(new Set((await rowsOf(accountId)).map((row) => JSON.stringify(row.prices))), new Set([CHAT, LONG_CONTEXT].map((p) => JSON.stringify(p))));
    assert.equal(await priceListCount(), 2);
  });

  test('a settle given no prices names no price list', async () => {
    const accountId = await funded();
    const held = await holdFundsAtOnce(ctx.store(), call(accountId));
    await settleHold(ctx.store(), held.holdId, { chargeMicros: 600, units: UNITS });
    assert.deepEqual(await rowsOf(accountId), [{ price_id: null, prices: null }]);
  });
}

test('price lists that differ only in the order of their fields have one id', () => {
  assert.equal(priceListId({ output_token: 8_000_000, input_token: 2_000_000 }), priceListId(CHAT));
  assert.match(priceListId(CHAT), /^pl_[0-9a-f]{16}$/);
});

test('price lists that differ in a price have different ids', () => {
  assert.notEqual(priceListId({ ...CHAT, output_token: 8_000_001 }), priceListId(CHAT));
});

describe('usage price lists on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollroute-price-lists-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  priceListContract(storePerTest(() => `sqlite:${join(dir, `s${++n}.db`)}`));
});

const postgresUrl = await requirePostgresOrSkip('usage price lists on PostgreSQL');
if (postgresUrl) {
  describe('usage price lists on PostgreSQL', () => {
    const schemas: string[] = [];
    after(() => dropTestSchemas(postgresUrl, schemas));
    priceListContract(
      storePerTest(() => {
        const fresh = withTestSchema(postgresUrl);
        schemas.push(fresh.schema);
        return fresh.url;
      }),
    );
  });
}
