// Redemption races on PostgreSQL: two gateway instances on one store, many simultaneous tries of a
// code split across both. The code credits exactly once (one ledger row, one balance change) and
// the wrong-code limit holds exactly, however the tries interleave.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { freshSchemaUrls, requirePostgresOrSkip } from '../helpers/postgres.js';
import { ledgerOf, makeBatch } from './redemption-helpers.js';

const baseUrl = await requirePostgresOrSkip('redemption races on PostgreSQL');

describe('redemption races on two instances sharing PostgreSQL', { skip: !baseUrl, timeout: 120_000 }, () => {
  const gateways: TestGateway[] = [];
  /** Two instances on a fresh schema, with the given wrong-code limit. */
  const twoInstances = async (wrongCodes: number) => {
    const store = freshSchemaUrls(baseUrl!)();
    const redemption = { wrong_codes_per_window: wrongCodes, wrong_code_window_seconds: 3600 };
    const pair = [await startTestGateway({ store, redemption }), await startTestGateway({ store, redemption })] as const;
    gateways.push(...pair);
    return pair;
  };
  after(async () => {
    for (const gw of gateways) await gw.close();
  });

  test('forty simultaneous tries of one code by four accounts on two instances credit it exactly once', async () => {
    const [first, second] = await twoInstances(1_000);
    const accounts = await Promise.all(Array.from({ length: 4 }, () => first.account({ creditMicros: 500 })));
    const batch = await makeBatch(first, { amount_micros: 7_654_321, count: 1 });
    const statuses = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const gw = i % 2 === 0 ? first : second;
        return (await gw.call(accounts[i % 4]!.key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).status;
      }),
    );
    assert.deepEqual({ credited: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 409).length }, { credited: 1, refused: 39 });
    const balances = await Promise.all(accounts.map(async (a) => (await first.balance(a.accountId)).balance_micros));
    assert.deepEqual(
      balances.filter((b) => b !== 500),
      [500 + 7_654_321],
      'one account gained the amount, the others nothing',
    );
    const credits = (await Promise.all(accounts.map((a) => ledgerOf(first, a.accountId)))).flat().filter((row) => row.note?.includes(batch.id));
    assert.deepEqual(
      credits.map((row) => [row.kind, row.amount_micros]),
      [['credit', 7_654_321]],
    );
    for (const a of accounts) assert.equal((await checkAccountBalance(first.gateway.store, a.accountId)).consistent, true);
  });

  test('every code of a batch raced by two accounts on two instances credits once, and the total is exact', async () => {
    const [first, second] = await twoInstances(1_000);
    const [a, b] = [await first.account({ creditMicros: 0 }), await second.account({ creditMicros: 0 })];
    const batch = await makeBatch(second, { amount_micros: 333_333, count: 20 });
    const tries = batch.codes.flatMap((code) => [
      first.call(a.key, 'POST', '/v1/account/redemptions', { code }),
      second.call(b.key, 'POST', '/v1/account/redemptions', { code }),
    ]);
    const statuses = (await Promise.all(tries)).map((answer) => answer.status);
    assert.equal(statuses.filter((s) => s === 200).length, 20);
    const total = (await first.balance(a.accountId)).balance_micros + (await first.balance(b.accountId)).balance_micros;
    assert.equal(total, 20 * 333_333);
    const rows = [...(await ledgerOf(first, a.accountId)), ...(await ledgerOf(first, b.accountId))];
    assert.equal(rows.length, 20);
    const listed = (await first.admin('GET', '/admin/redemption-batches')).body.data;
    assert.equal(listed.find((entry: { id: string }) => entry.id === batch.id).redeemed, 20);
  });

  test('of thirty simultaneous wrong tries on two instances, exactly the limit of five are looked up and the rest answered 429', async () => {
    const [first, second] = await twoInstances(5);
    const { key } = await first.account({ creditMicros: 0 });
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const gw = i % 2 === 0 ? first : second;
        return (await gw.call(key, 'POST', '/v1/account/redemptions', { code: `trc-WRONG${String(i).padStart(21, '0')}` })).status;
      }),
    );
    assert.deepEqual({ looked_up: statuses.filter((s) => s === 404).length, limited: statuses.filter((s) => s === 429).length }, { looked_up: 5, limited: 25 });
  });
});
