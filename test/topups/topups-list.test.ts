// The account's top-ups (GET /v1/account/topups and its CSV): its credit rows, newest first, with
// what each was; never a call's holds and settles, never another account's rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { openStore, type Store } from '../../src/store/open.js';
import { listTopUpRows } from '../../src/store/topup-rows.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { plansOf } from '../store/query-plans.js';
import { makeBatch } from './redemption-helpers.js';

describe('the account’s top-ups', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  /** An account with an opening credit, an operator credit with a note, a redeemed code and a chat call, in that order. */
  const accountWithHistory = async () => {
    const account = await gw.account({ creditMicros: 2_000_000 });
    assert.equal((await gw.admin('POST', `/admin/accounts/${account.accountId}/credit`, { amount_micros: 500_000, note: 'Invoice 7, "paid"' })).status, 200);
    const batch = await makeBatch(gw, { amount_micros: 250_000, count: 1 });
    assert.equal((await gw.call(account.key, 'POST', '/v1/account/redemptions', { code: batch.codes[0] })).status, 200);
    const chat = await gw.call(account.key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(chat.status, 200);
    await gw.settled(account.accountId);
    return { ...account, batch };
  };

  test('the list holds the account’s credits, newest first, each with what it was, and no hold or settle', async () => {
    const { key, batch } = await accountWithHistory();
    await accountWithHistory(); // another account's rows stay its own
    const listed = await gw.call(key, 'GET', '/v1/account/topups');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.next_cursor, null);
    assert.deepEqual(
      listed.body.data.map(({ kind, amount_micros, note, description }: Record<string, unknown>) => ({ kind, amount_micros, note, description })),
      [
        { kind: 'credit', amount_micros: 250_000, note: `redemption code batch ${batch.id}`, description: `redemption code batch ${batch.id}` },
        { kind: 'credit', amount_micros: 500_000, note: 'Invoice 7, "paid"', description: 'Invoice 7, "paid"' },
        { kind: 'credit', amount_micros: 2_000_000, note: null, description: 'operator credit' },
      ],
    );
  });

  test('pages follow each other through next_cursor with no row missed or repeated', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1 });
    for (let n = 2; n <= 5; n++) await gw.admin('POST', `/admin/accounts/${accountId}/credit`, { amount_micros: n });
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const path: string = `/v1/account/topups?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await gw.call(key, 'GET', path);
      assert.equal(page.status, 200);
      seen.push(...page.body.data.map((row: { amount_micros: number }) => row.amount_micros));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    assert.deepEqual({ seen, pages }, { seen: [5, 4, 3, 2, 1], pages: 3 });
  });

  test('a cursor the API did not give is refused with a 400 naming cursor', async () => {
    const { key } = await gw.account();
    const forged = Buffer.from(JSON.stringify([1, 'use_1'])).toString('base64url');
    const refused = await gw.call(key, 'GET', `/v1/account/topups?cursor=${forged}`);
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /^cursor: /);
  });

  test('the CSV holds every top-up with a header, quoted as RFC 4180 writes it', async () => {
    const { key, batch } = await accountWithHistory();
    const listed = (await gw.call(key, 'GET', '/v1/account/topups')).body.data as { id: number; created_at: string }[];
    const res = await request(`${gw.url}/v1/account/topups.csv`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    assert.match(String(res.headers['content-disposition']), /filename="topups.csv"/);
    assert.equal(
      await res.body.text(),
      [
        'id,created_at,kind,amount_micros,description',
        `${listed[0]!.id},${listed[0]!.created_at},credit,250000,redemption code batch ${batch.id}`,
        `${listed[1]!.id},${listed[1]!.created_at},credit,500000,"Invoice 7, ""paid"""`,
        `${listed[2]!.id},${listed[2]!.created_at},credit,2000000,operator credit`,
        '',
      ].join('\r\n'),
    );
  });

  test('a console session reads the same list as the key', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 3 });
    const link = (await gw.admin('POST', `/admin/accounts/${accountId}/login-links`)).body.url as string;
    const token = new URL(link).hash.replace('#token=', '');
    const signIn = await request(`${gw.url}/v1/account/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login_token: token }),
    });
    assert.equal(signIn.statusCode, 200, await signIn.body.text());
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const bySession = await request(`${gw.url}/v1/account/topups`, { headers: { cookie } });
    assert.deepEqual(await bySession.body.json(), (await gw.call(key, 'GET', '/v1/account/topups')).body);
  });
});

describe('reading top-ups on SQLite', () => {
  let store: Store;
  before(async () => {
    store = await openStore('sqlite::memory:');
  });
  after(() => store.close());

  test('the query reads the partial index of credits and debits, not the account’s chain of every row', async () => {
    const plans = await plansOf(store.db, (db) => listTopUpRows(db, { accountId: 'acct_x', beforeId: 10, limit: 5 }));
    assert.ok(
      plans.some((step) => step.includes('ledger_topups')),
      plans.join('\n'),
    );
  });
});
