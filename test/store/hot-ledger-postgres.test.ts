// The hot ledger on PostgreSQL writes the rows billing/ledger.ts's transaction steps write, applies
// each hold's end exactly once under concurrency, and keeps balance + held equal to the ledger. Each
// comparison runs both paths on twin accounts with the same pinned clock. Every step here goes
// through a batch statement (of one step, when awaited alone); hot-ledger-postgres-batch.test.ts
// puts many steps in one.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import type pg from 'pg';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { type HoldRequest, holdFundsIn, releaseHoldIn, type SettleOptions, settleHold, settleHoldIn } from '../../src/billing/ledger.js';
import { postgresHotLedger } from '../../src/store/hot-ledger/postgres.js';
import type { HotLedger, SettleResult } from '../../src/store/hot-ledger/types.js';
import { newId } from '../../src/store/ids.js';
import { openStore, type Store } from '../../src/store/open.js';
import { freshSchemas, requirePostgresOrSkip } from '../helpers/postgres.js';
import { holdRequest, NOW, openSchemaStore, UNITS } from './fixtures/hot-ledger-entries.js';

// The transaction steps themselves (holdFunds and friends now take the hot path on this store).
const txHold = (store: Store, request: HoldRequest) => store.db.transaction().execute((trx) => holdFundsIn(trx, request));
const txSettle = (store: Store, holdId: string, options: SettleOptions) => store.db.transaction().execute((trx) => settleHoldIn(trx, holdId, options));
const txRelease = (store: Store, holdId: string, options: { note?: string; now?: number }) =>
  store.db.transaction().execute((trx) => releaseHoldIn(trx, holdId, options));

interface Fixture {
  store: Store;
  pool: pg.Pool;
  ledger: HotLedger;
}

const baseUrl = await requirePostgresOrSkip('PostgreSQL hot ledger tests');
if (baseUrl) {
  const nextSchema = freshSchemas(baseUrl);
  const postgresUrl = baseUrl; // narrowed to a string inside the functions below too

  async function openFixture(t: TestContext, { poolSize = 10 }: { poolSize?: number } = {}): Promise<Fixture> {
    const { store, pool } = await openSchemaStore(t, postgresUrl, nextSchema(), poolSize);
    return { store, pool, ledger: postgresHotLedger(pool) };
  }

  /** Everything an account's money steps wrote, with the random ids taken out so twins compare equal. */
  async function rowsOf(pool: pg.Pool, accountId: string) {
    const [account, holds, ledger, usage] = await Promise.all([
      pool.query('select balance_micros, held_micros, overdraft_micros from accounts where id = $1', [accountId]),
      pool.query('select * from holds where account_id = $1 order by created_at, id', [accountId]),
      pool.query('select * from ledger where account_id = $1 order by id', [accountId]),
      pool.query('select * from usage where account_id = $1 order by created_at, id', [accountId]),
    ]);
    const ownHolds = new Set(holds.rows.map((row) => row.id));
    const withoutIds = ({ id: _id, account_id: _account, hold_id: holdId, ...row }: Record<string, any>): Record<string, any> => ({
      ...row,
      ...(holdId === undefined ? {} : { hold_id: ownHolds.has(holdId) ? 'own hold' : holdId }),
    });
    return { account: account.rows[0], holds: holds.rows.map(withoutIds), ledger: ledger.rows.map(withoutIds), usage: usage.rows.map(withoutIds) };
  }

  async function tableCounts(pool: pg.Pool) {
    const { rows } = await pool.query(
      'select (select count(*) from holds) as holds, (select count(*) from ledger) as ledger, (select count(*) from usage) as usage, (select sum(balance_micros + held_micros) from accounts)::bigint as money',
      [],
    );
    return rows[0];
  }

  async function hotHold(ledger: HotLedger, accountId: string, amountMicros = 300): Promise<string> {
    const holdId = newId('hold');
    assert.equal(await ledger.hold({ holdId, ...holdRequest(accountId, amountMicros) }), true);
    return holdId;
  }

  function settleEntry(holdId: string, chargeMicros: number, { flags = [] as string[], requestId = null as string | null, now = NOW + 1 } = {}) {
    return { holdId, chargeMicros, units: JSON.stringify(UNITS), requestId, flags, usageId: newId('use'), now };
  }

  /** Settles a hold on twin accounts, once by settleHold and once by the hot ledger; both must write the same. */
  async function settleOnTwins(t: TestContext, chargeMicros: number, options: { flags?: string[]; requestId?: string } = {}) {
    const { store, pool, ledger } = await openFixture(t);
    const viaTransaction = await createAccount(store, { name: 'transaction', creditMicros: 1_000, now: NOW });
    const viaStatement = await createAccount(store, { name: 'statement', creditMicros: 1_000, now: NOW });
    const { holdId } = await txHold(store, holdRequest(viaTransaction.id));
    const outcome = await txSettle(store, holdId, { chargeMicros, units: UNITS, requestId: options.requestId, flags: options.flags, now: NOW + 1 });
    const hotHoldId = await hotHold(ledger, viaStatement.id);
    const result = await ledger.settle(settleEntry(hotHoldId, chargeMicros, { flags: options.flags, requestId: options.requestId ?? null }));
    assert.deepEqual(result, { kind: 'applied', chargedMicros: outcome.chargedMicros, unbilledMicros: outcome.unbilledMicros });
    const rows = await rowsOf(pool, viaStatement.id);
    assert.deepEqual(rows, await rowsOf(pool, viaTransaction.id));
    return { result, rows };
  }

  test('a hold moves funds to held and writes the same hold and ledger rows as holdFundsIn', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const viaTransaction = await createAccount(store, { name: 'transaction', creditMicros: 1_000, now: NOW });
    const viaStatement = await createAccount(store, { name: 'statement', creditMicros: 1_000, now: NOW });
    await txHold(store, holdRequest(viaTransaction.id));
    await hotHold(ledger, viaStatement.id);

    const rows = await rowsOf(pool, viaStatement.id);
    assert.deepEqual(rows, await rowsOf(pool, viaTransaction.id));
    assert.deepEqual(rows.account, { balance_micros: 700, held_micros: 300, overdraft_micros: 0 });
    assert.equal(rows.holds[0]?.state, 'open');
    assert.deepEqual(
      rows.ledger.map((row) => [row.kind, row.balance_delta_micros, row.held_delta_micros]),
      [
        ['credit', 1_000, 0],
        ['hold', -300, 300],
      ],
    );
  });

  test('a hold the balance does not cover returns false and writes nothing', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'short', creditMicros: 299, now: NOW });
    const before = await tableCounts(pool);
    assert.equal(await ledger.hold({ holdId: newId('hold'), ...holdRequest(account.id, 300) }), false);
    assert.deepEqual(await tableCounts(pool), before);
    assert.equal((await checkAccountBalance(store, account.id)).balanceMicros, 299);
  });

  test('a hold on an account that does not exist returns false and writes nothing', async (t) => {
    const { pool, ledger } = await openFixture(t);
    const before = await tableCounts(pool);
    assert.equal(await ledger.hold({ holdId: newId('hold'), ...holdRequest('acct_missing') }), false);
    assert.deepEqual(await tableCounts(pool), before);
  });

  test('concurrent holds never take the balance below zero', async (t) => {
    const { store, ledger } = await openFixture(t, { poolSize: 25 });
    const account = await createAccount(store, { name: 'tight', creditMicros: 1_000, now: NOW });
    const placed = await Promise.all(Array.from({ length: 50 }, () => ledger.hold({ holdId: newId('hold'), ...holdRequest(account.id, 100) })));
    assert.equal(placed.filter(Boolean).length, 10);
    const check = await checkAccountBalance(store, account.id);
    assert.deepEqual([check.balanceMicros, check.heldMicros, check.consistent], [0, 1_000, true]);
  });

  test('a settle below the hold writes the same rows as settleHoldIn and returns the rest', async (t) => {
    const { result, rows } = await settleOnTwins(t, 120, { requestId: 'req_settle' });
    assert.deepEqual(result, { kind: 'applied', chargedMicros: 120, unbilledMicros: 0 });
    assert.deepEqual(rows.account, { balance_micros: 880, held_micros: 0, overdraft_micros: 0 });
    assert.deepEqual(rows.usage[0]?.request_id, 'req_settle');
    assert.equal(rows.usage[0]?.flags, null);
  });

  test('a settle equal to the hold writes the same rows as settleHoldIn', async (t) => {
    const { result, rows } = await settleOnTwins(t, 300, { flags: ['clamped'] });
    assert.deepEqual(result, { kind: 'applied', chargedMicros: 300, unbilledMicros: 0 });
    assert.deepEqual(rows.account, { balance_micros: 700, held_micros: 0, overdraft_micros: 0 });
    assert.equal(rows.usage[0]?.flags, 'clamped');
    assert.equal(rows.usage[0]?.request_id, 'req_hold');
  });

  test('a settle past the hold without overdraft takes the hold, records the rest as unbilled and flags it capped', async (t) => {
    const { result, rows } = await settleOnTwins(t, 450, { flags: ['clamped'] });
    assert.deepEqual(result, { kind: 'applied', chargedMicros: 300, unbilledMicros: 150 });
    assert.deepEqual(rows.account, { balance_micros: 700, held_micros: 0, overdraft_micros: 0 });
    assert.deepEqual(
      { charged: rows.holds[0]?.charged_micros, amount: rows.usage[0]?.amount_micros, unbilled: rows.usage[0]?.unbilled_micros, flags: rows.usage[0]?.flags },
      { charged: 300, amount: 300, unbilled: 150, flags: 'clamped,capped' },
    );
  });

  test('a settle of zero writes the usage row all the same', async (t) => {
    const { result, rows } = await settleOnTwins(t, 0);
    assert.deepEqual(result, { kind: 'applied', chargedMicros: 0, unbilledMicros: 0 });
    assert.equal(rows.usage.length, 1);
    assert.deepEqual(rows.account, { balance_micros: 1_000, held_micros: 0, overdraft_micros: 0 });
  });

  test('a settle past the hold on an overdraft account returns needs-transaction and writes nothing', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'overdraft', creditMicros: 1_000, overdraftMicros: 500, now: NOW });
    const holdId = await hotHold(ledger, account.id);
    const before = await rowsOf(pool, account.id);
    assert.deepEqual(await ledger.settle(settleEntry(holdId, 450)), { kind: 'needs-transaction' });
    assert.deepEqual(await rowsOf(pool, account.id), before);
    // The hold is still open for the transaction step the caller runs next.
    const outcome = await settleHold(store, holdId, { chargeMicros: 450, units: UNITS, now: NOW + 1 });
    assert.deepEqual(outcome, { applied: true, chargedMicros: 450, unbilledMicros: 0 });
  });

  test('a settle within the hold on an overdraft account is applied in one statement', async (t) => {
    const { store, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'overdraft', creditMicros: 1_000, overdraftMicros: 500, now: NOW });
    const holdId = await hotHold(ledger, account.id);
    assert.deepEqual(await ledger.settle(settleEntry(holdId, 300)), { kind: 'applied', chargedMicros: 300, unbilledMicros: 0 });
    assert.equal((await checkAccountBalance(store, account.id)).balanceMicros, 700);
  });

  test('a settle of a hold already ended returns not-open and writes nothing', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'ended', creditMicros: 1_000, now: NOW });
    const settled = await hotHold(ledger, account.id);
    assert.equal((await ledger.settle(settleEntry(settled, 100))).kind, 'applied');
    const released = await hotHold(ledger, account.id);
    assert.equal(await ledger.release({ holdId: released, note: null, now: NOW + 1 }), true);
    const before = await rowsOf(pool, account.id);
    assert.deepEqual(await ledger.settle(settleEntry(settled, 100)), { kind: 'not-open' });
    assert.deepEqual(await ledger.settle(settleEntry(released, 100)), { kind: 'not-open' });
    assert.deepEqual(await rowsOf(pool, account.id), before);
  });

  test('a settle of a hold that never existed returns not-open and writes nothing', async (t) => {
    const { pool, ledger } = await openFixture(t);
    const before = await tableCounts(pool);
    assert.deepEqual(await ledger.settle(settleEntry('hold_missing', 100)), { kind: 'not-open' });
    assert.deepEqual(await tableCounts(pool), before);
  });

  test('a release returns the hold and writes the same rows as releaseHoldIn', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const viaTransaction = await createAccount(store, { name: 'transaction', creditMicros: 1_000, now: NOW });
    const viaStatement = await createAccount(store, { name: 'statement', creditMicros: 1_000, now: NOW });
    const { holdId } = await txHold(store, holdRequest(viaTransaction.id));
    await txRelease(store, holdId, { note: 'upstream failed', now: NOW + 1 });
    const hotHoldId = await hotHold(ledger, viaStatement.id);
    assert.equal(await ledger.release({ holdId: hotHoldId, note: 'upstream failed', now: NOW + 1 }), true);

    const rows = await rowsOf(pool, viaStatement.id);
    assert.deepEqual(rows, await rowsOf(pool, viaTransaction.id));
    assert.deepEqual(rows.account, { balance_micros: 1_000, held_micros: 0, overdraft_micros: 0 });
    assert.deepEqual([rows.ledger[2]?.kind, rows.ledger[2]?.note, rows.holds[0]?.charged_micros], ['release', 'upstream failed', null]);
  });

  test('a release of a hold already ended or never existing returns false and writes nothing', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'ended', creditMicros: 1_000, now: NOW });
    const settled = await hotHold(ledger, account.id);
    assert.equal((await ledger.settle(settleEntry(settled, 100))).kind, 'applied');
    const released = await hotHold(ledger, account.id);
    assert.equal(await ledger.release({ holdId: released, note: null, now: NOW + 1 }), true);
    const before = await tableCounts(pool);
    assert.equal(await ledger.release({ holdId: settled, note: null, now: NOW + 2 }), false);
    assert.equal(await ledger.release({ holdId: released, note: null, now: NOW + 2 }), false);
    assert.equal(await ledger.release({ holdId: 'hold_missing', note: null, now: NOW + 2 }), false);
    assert.deepEqual(await tableCounts(pool), before);
  });

  /** Resolves once a statement mentioning `marker` is waiting on a lock. */
  async function waitUntilBlocked(pool: pg.Pool, marker: string): Promise<void> {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const { rows } = await pool.query("select count(*) as waiting from pg_stat_activity where wait_event_type = 'Lock' and strpos(query, $1) > 0", [marker]);
      if (rows[0].waiting > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no statement mentioning ${marker} waited on a lock within 10 s`);
  }

  /**
   * Runs `first` in a transaction on a connection of its own, starts the settle once that holds its
   * row locks, and commits only when the settle waits on them: the two sessions in a fixed order.
   */
  async function settleWhileLocked(pool: pg.Pool, first: (client: pg.PoolClient) => Promise<void>, settle: () => Promise<SettleResult>) {
    const client = await pool.connect();
    let settling: Promise<SettleResult>;
    try {
      await client.query('begin');
      await first(client);
      settling = settle();
      settling.catch(() => {}); // awaited by the caller; a failure here first must not leave it unhandled
      await waitUntilBlocked(pool, 'named_hold');
      await client.query('commit');
    } finally {
      // Destroyed rather than returned: after a failure it may still be inside its transaction.
      client.release(true);
    }
    return settling;
  }

  test('a settle that waited on a concurrent release reports not-open, even past the hold on an overdraft account', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'raced', creditMicros: 1_000, overdraftMicros: 500, now: NOW });
    const holdId = await hotHold(ledger, account.id);
    const result = await settleWhileLocked(
      pool,
      async (client) => assert.equal(await postgresHotLedger(client).release({ holdId, note: null, now: NOW + 1 }), true),
      () => ledger.settle(settleEntry(holdId, 450)),
    );
    assert.deepEqual(result, { kind: 'not-open' });
    const check = await checkAccountBalance(store, account.id);
    assert.deepEqual([check.balanceMicros, check.heldMicros, check.consistent], [1_000, 0, true]);
  });

  test('a settle that waited on a concurrent write to the still open hold applies', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    const account = await createAccount(store, { name: 'raced', creditMicros: 1_000, now: NOW });
    const holdId = await hotHold(ledger, account.id);
    const result = await settleWhileLocked(
      pool,
      async (client) => {
        await client.query(`update holds set progress = '{"output_token":5}' where id = $1 and state = 'open'`, [holdId]);
      },
      () => ledger.settle(settleEntry(holdId, 120)),
    );
    assert.deepEqual(result, { kind: 'applied', chargedMicros: 120, unbilledMicros: 0 });
    const check = await checkAccountBalance(store, account.id);
    assert.deepEqual([check.balanceMicros, check.heldMicros, check.consistent], [880, 0, true]);
  });

  test('50 concurrent settles and releases of one hold apply exactly once', async (t) => {
    const { store, pool, ledger } = await openFixture(t, { poolSize: 50 });
    const account = await createAccount(store, { name: 'contended', creditMicros: 1_000, now: NOW });
    const holdId = await hotHold(ledger, account.id);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2 === 0
          ? ledger.settle(settleEntry(holdId, 100)).then((result) => (result.kind === 'applied' ? 'settled' : result.kind))
          : ledger.release({ holdId, note: null, now: NOW + 1 }).then((applied) => (applied ? 'released' : 'not-open')),
      ),
    );
    const applied = outcomes.filter((outcome) => outcome !== 'not-open');
    assert.equal(applied.length, 1, `outcomes: ${outcomes.join(' ')}`);

    const { rows: ends } = await pool.query("select kind from ledger where hold_id = $1 and kind <> 'hold'", [holdId]);
    assert.deepEqual(
      ends.map((row) => row.kind),
      [applied[0] === 'settled' ? 'settle' : 'release'],
    );
    const check = await checkAccountBalance(store, account.id);
    assert.deepEqual([check.balanceMicros, check.heldMicros, check.consistent], [applied[0] === 'settled' ? 900 : 1_000, 0, true]);
  });

  test('many concurrent holds, settles and releases on one account leave the balance exact and equal to the ledger', async (t) => {
    const { store, pool, ledger } = await openFixture(t, { poolSize: 32 });
    const credit = 10_000_000;
    const account = await createAccount(store, { name: 'busy', creditMicros: credit, now: NOW });
    let taken = 0;
    let unbilled = 0;
    // Deterministic amounts: holds of 1..997, charges below, at and past the hold, every 7th released.
    const pairs = Array.from({ length: 800 }, (_, i) => ({ amount: 1 + ((i * 131) % 997), charge: (i * 389) % 1_500, release: i % 7 === 0 }));
    const worker = async (mine: typeof pairs) => {
      for (const pair of mine) {
        const holdId = await hotHold(ledger, account.id, pair.amount);
        if (pair.release) {
          assert.equal(await ledger.release({ holdId, note: null, now: NOW + 1 }), true);
          continue;
        }
        const result = await ledger.settle(settleEntry(holdId, pair.charge));
        assert.equal(result.kind, 'applied');
        if (result.kind !== 'applied') return;
        assert.deepEqual(result, {
          kind: 'applied',
          chargedMicros: Math.min(pair.charge, pair.amount),
          unbilledMicros: Math.max(0, pair.charge - pair.amount),
        });
        taken += result.chargedMicros;
        unbilled += result.unbilledMicros;
      }
    };
    await Promise.all(Array.from({ length: 32 }, (_, w) => worker(pairs.filter((_, i) => i % 32 === w))));

    const check = await checkAccountBalance(store, account.id);
    assert.deepEqual(check, { balanceMicros: credit - taken, heldMicros: 0, ledgerBalanceMicros: credit - taken, ledgerHeldMicros: 0, consistent: true });
    const { rows } = await pool.query('select sum(amount_micros)::bigint as taken, sum(unbilled_micros)::bigint as unbilled from usage where account_id = $1', [
      account.id,
    ]);
    assert.deepEqual(rows[0], { taken, unbilled });
  });

  test('ledger and usage rows may reference their hold by foreign key: the check runs at the end of the statement', async (t) => {
    const { store, pool, ledger } = await openFixture(t);
    // Not in the schema today; added here so a future migration adding them cannot break the steps.
    await pool.query('alter table ledger add foreign key (hold_id) references holds (id)', []);
    await pool.query('alter table usage add foreign key (hold_id) references holds (id)', []);
    const account = await createAccount(store, { name: 'referenced', creditMicros: 1_000, now: NOW });
    const settled = await hotHold(ledger, account.id);
    assert.equal((await ledger.settle(settleEntry(settled, 100))).kind, 'applied');
    const released = await hotHold(ledger, account.id);
    assert.equal(await ledger.release({ holdId: released, note: null, now: NOW + 1 }), true);
    await assert.rejects(
      pool.query(
        "insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, created_at) values ($1, 'hold', 0, 0, 'hold_missing', 0)",
        [account.id],
      ),
      /foreign key/,
    );
    assert.equal((await checkAccountBalance(store, account.id)).balanceMicros, 900);
  });

  test('each step is a prepared statement: parsed and planned once per connection, not per call', async (t) => {
    const { store, pool, ledger } = await openFixture(t, { poolSize: 1 });
    const account = await createAccount(store, { name: 'prepared', creditMicros: 10_000, now: NOW });
    for (let i = 0; i < 3; i++) {
      assert.equal((await ledger.settle(settleEntry(await hotHold(ledger, account.id), 100))).kind, 'applied');
      assert.equal(await ledger.release({ holdId: await hotHold(ledger, account.id), note: null, now: NOW + 1 }), true);
    }
    // The pool's one connection ran every step above.
    const { rows } = await pool.query("select name from pg_prepared_statements where name like 'tollroute_%' order by name", []);
    assert.deepEqual(
      rows.map((row) => row.name),
      ['tollroute_hold_batch', 'tollroute_release_batch', 'tollroute_settle_batch'],
    );
  });

  test('the store URL may set synchronous_commit for every connection, and a value PostgreSQL lacks is refused by name', async (t) => {
    const { url } = nextSchema();
    const store = await openStore(`${url}&synchronous_commit=off`);
    t.after(() => store.close());
    const { rows } = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(store.db);
    assert.deepEqual(rows, [{ synchronous_commit: 'off' }]);
    await assert.rejects(
      openStore(`${url}&synchronous_commit=later`),
      /synchronous_commit must be one of on, off, local, remote_write, remote_apply, got "later"/,
    );
  });
}
