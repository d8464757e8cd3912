// On SQLite a call's hold is decided in memory and written with its settle (one step, one commit);
// a stream's is put in the settle journal before its first byte. The settle of a call answered in one piece is journaled and
// answered before the store has it; the store writes it in the shadow of a later call.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
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
    // No outbox poll during a call: a statement of the store's would write its hold alone first.
    gw = await startTestGateway({ webhooks: { poll_interval_ms: 60_000 } });
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

  test("of a stream is made durable before the stream's first byte reaches the caller", async () => {
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
        assert.equal(committed, true, 'the answer began before its hold was durable');
        assert.match(await res.body.text(), /\[DONE\]/);
      },
    );
    await gw.settled(accountId);
    assert.deepEqual(await ledgerKinds(gw, accountId), ['credit', 'hold', 'settle']);
  });

  test("of a stream goes into the gateway's settle journal while the upstream works, and its settle after it", async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(streamBody),
    });
    assert.match(await res.body.text(), /\[DONE\]/);
    await gw.settled(accountId);
    const journal = readFileSync(path.join(gw.dataDir, 'answered-settles.jsonl'), 'utf8').split('\n').filter(Boolean);
    const lines = journal.map((line) => JSON.parse(line) as unknown[]).filter((fields) => fields.includes(accountId));
    assert.deepEqual(
      lines.map((fields) => fields[0]),
      [2, 1],
      'its hold alone, then its settle with the hold',
    );
    assert.deepEqual(await ledgerKinds(gw, accountId), ['credit', 'hold', 'settle']);
  });

  test("of a call answered in one piece is settled through the gateway's settle journal", async () => {
    const { accountId, key } = await gw.account({ creditMicros: 100_000 });
    // Three calls: a statement of the store's during one (a poll) writes its hold alone, and its settle is committed instead.
    for (let i = 0; i < 3; i++) assert.equal((await search(gw, key)).status, 200);
    assert.deepEqual(await ledgerKinds(gw, accountId), ['credit', 'hold', 'settle', 'hold', 'settle', 'hold', 'settle']);
    const journal = readFileSync(path.join(gw.dataDir, 'answered-settles.jsonl'), 'utf8');
    assert.ok(journal.includes(accountId), 'its settle went through the journal');
  });
});
