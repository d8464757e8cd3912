// On SQLite a call's hold is decided in memory and written with its settle (one step, one commit),
// or alone before a stream's first byte. When it cannot be written, nothing of the call reaches the
// caller and nothing is charged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { request } from 'undici';
import type { HotLedger } from '../../src/store/hot-ledger/types.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SEARCH_PRICE = 5_000;
const search = (gw: TestGateway, key: string) => gw.call(key, 'POST', '/v1/search', { Type: 'web', Query: 'held in memory' });
const streamBody = { model: 'sandbox-chat', stream: true, messages: [{ role: 'user', content: 'tell me a story [[words:20]]' }] };
const ledgerKinds = async (gw: TestGateway, accountId: string) =>
  ((await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data as { kind: string }[]).map((row) => row.kind).reverse();

/** Replaces one method of the gateway's hot ledger for the length of `run`. */
async function withLedgerMethod<K extends 'holdAtOnce' | 'writeHold'>(
  gw: TestGateway,
  name: K,
  replace: (original: NonNullable<HotLedger[K]>) => NonNullable<HotLedger[K]>,
  run: () => Promise<void>,
) {
  const hotLedger = gw.gateway.store.hotLedger!;
  const original = hotLedger[name] as NonNullable<HotLedger[K]>; // (its methods are closures: no this to bind)
  hotLedger[name] = replace(original);
  try {
    await run();
  } finally {
    hotLedger[name] = original;
  }
}

describe('a hold decided in memory', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  test('of a call answered in one piece is written with its settle, never alone, and reads hold then settle', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    let writtenAlone = 0;
    await withLedgerMethod(
      gw,
      'writeHold',
      (original) => (holdId) => {
        writtenAlone += 1;
        return original(holdId);
      },
      async () => assert.equal((await search(gw, key)).status, 200),
    );
    assert.equal(writtenAlone, 0);
    assert.deepEqual(await ledgerKinds(gw, accountId), ['credit', 'hold', 'settle']);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 100_000 - SEARCH_PRICE, held_micros: 0 });
  });

  test("of a stream is written before the stream's first byte reaches the caller", async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    let committed = false;
    await withLedgerMethod(
      gw,
      'writeHold',
      (original) => async (holdId) => {
        await new Promise((resolve) => setTimeout(resolve, 200)); // a slow commit
        await original(holdId);
        committed = true;
      },
      async () => {
        const res = await request(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(streamBody),
        });
        assert.equal(res.statusCode, 200);
        assert.equal(committed, true, 'the answer began before its hold was committed');
        assert.match(await res.body.text(), /\[DONE\]/);
      },
    );
    await gw.settled(accountId);
    assert.deepEqual(await ledgerKinds(gw, accountId), ['credit', 'hold', 'settle']);
  });

  test('whose balance another process spends while the call runs answers 402, and the call is charged nothing', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 10_000 });
    const debitElsewhere = () => {
      const other = new Database(gw.storeUrl.slice('sqlite:'.length));
      try {
        other.transaction(() => {
          other
            .prepare(`insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, created_at) values (?, 'debit', -8000, 0, 1)`)
            .run(accountId);
          other.prepare('update accounts set balance_micros = balance_micros - 8000 where id = ?').run(accountId);
        })();
      } finally {
        other.close();
      }
    };
    const before = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.length;
    let answer: { status: number; body: any } | undefined;
    await withLedgerMethod(
      gw,
      'holdAtOnce',
      (original) => (entry) => {
        const decided = original(entry);
        debitElsewhere();
        return decided;
      },
      async () => {
        answer = await search(gw, key);
      },
    );
    assert.equal(answer?.status, 402);
    assert.equal(answer?.body.type, 'billing_error');
    assert.ok(
      gw.logs.some((line) => line.msg === "the call's hold could not be written; its answer is dropped and nothing is charged"),
      'the operator reads why',
    );
    assert.equal((await gw.sandboxControl('GET', '/__sandbox/requests')).data.length, before + 1, 'the call had gone upstream');
    assert.deepEqual(await ledgerKinds(gw, accountId), ['credit', 'debit']);
    assert.deepEqual(await gw.balance(accountId), { ...(await gw.balance(accountId)), balance_micros: 2_000, held_micros: 0 });
  });
});
