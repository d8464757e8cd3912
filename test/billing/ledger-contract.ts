// Contract of the money rules (DESIGN §3) on a real store: amounts, ledger rows, exactly-once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkAccountBalance, createAccount, creditAccount } from '../../src/billing/accounts.js';
import { holdFunds, releaseHold, settleHold } from '../../src/billing/ledger.js';
import { GatewayError } from '../../src/errors.js';
import { findAccount } from '../../src/store/accounts.js';
import { findHold, listOrphanedHolds } from '../../src/store/holds.js';
import { heartbeat, registerInstance } from '../../src/store/instances.js';
import { listLedger } from '../../src/store/ledger-rows.js';
import { listUsage } from '../../src/store/usage.js';
import type { StoreContext } from '../store/store-context.js';

const withStatus = (status: number) => (error: unknown) => error instanceof GatewayError && error.status === status;

// Ledger rows without their generated id, newest first, as listLedger returns them.
export async function ledgerOf(ctx: StoreContext, accountId: string) {
  const rows = await listLedger(ctx.store(), { accountId });
  return rows.map(({ id: _id, ...row }) => row);
}

const row = (accountId: string, fields: Record<string, unknown>) => ({
  account_id: accountId,
  hold_id: null,
  request_id: null,
  model: null,
  note: null,
  held_delta_micros: 0,
  ...fields,
});

export function ledgerContract(ctx: StoreContext): void {
  const call = { requestId: 'req_1', model: 'chat-small', endpoint: '/v1/chat/completions' };
  const funded = (creditMicros: number) => createAccount(ctx.store(), { name: 'acme', creditMicros, now: 10 });
  const balances = async (accountId: string) => {
    const a = await findAccount(ctx.store().db, accountId);
    return { balance: a?.balance_micros, held: a?.held_micros };
  };

  describe('holds, settlement and release', () => {
    test('a hold moves its amount from balance to held and writes a hold row', async () => {
      const { id } = await funded(10_000);
      const hold = await holdFunds(ctx.store(), { accountId: id, keyId: 'key_1', amountMicros: 3_000, ...call, now: 20 });
      assert.deepEqual(await balances(id), { balance: 7_000, held: 3_000 });
      assert.deepEqual(await findHold(ctx.store().db, hold.holdId), {
        id: hold.holdId,
        account_id: id,
        key_id: 'key_1',
        amount_micros: 3_000,
        state: 'open',
        request_id: 'req_1',
        model: 'chat-small',
        endpoint: '/v1/chat/completions',
        task_id: null,
        charged_micros: null,
        created_at: 20,
        ended_at: null,
        instance_id: null,
        progress: null,
        client_request_id: null,
        cap_periods: null,
      });
      assert.deepEqual(await ledgerOf(ctx, id), [
        row(id, {
          kind: 'hold',
          balance_delta_micros: -3_000,
          held_delta_micros: 3_000,
          hold_id: hold.holdId,
          request_id: 'req_1',
          model: 'chat-small',
          created_at: 20,
        }),
        row(id, { kind: 'credit', balance_delta_micros: 10_000, created_at: 10 }),
      ]);
    });

    test('settling charges the usage, returns the rest of the hold and records the usage with the serving channel, its attempts and its answer time', async () => {
      const { id } = await funded(10_000);
      const { holdId } = await holdFunds(ctx.store(), { accountId: id, keyId: 'key_1', amountMicros: 3_000, ...call, now: 20 });
      const units = { input_token: 12, output_token: 30 };
      assert.deepEqual(await settleHold(ctx.store(), holdId, { chargeMicros: 1_200, units, upstreamMs: 41.6, channel: 'openai-b', attempts: 2, now: 30 }), {
        applied: true,
        chargedMicros: 1_200,
        unbilledMicros: 0,
      });
      assert.deepEqual(await balances(id), { balance: 8_800, held: 0 });
      assert.deepEqual(
        (await ledgerOf(ctx, id))[0],
        row(id, {
          kind: 'settle',
          balance_delta_micros: 1_800,
          held_delta_micros: -3_000,
          hold_id: holdId,
          request_id: 'req_1',
          model: 'chat-small',
          created_at: 30,
        }),
      );
      const usage = await listUsage(ctx.store().db, { accountId: id });
      assert.deepEqual(usage, [
        {
          id: usage[0]?.id,
          account_id: id,
          key_id: 'key_1',
          hold_id: holdId,
          request_id: 'req_1',
          model: 'chat-small',
          endpoint: '/v1/chat/completions',
          units: JSON.stringify(units),
          amount_micros: 1_200,
          created_at: 30,
          unbilled_micros: 0,
          flags: null,
          client_request_id: null,
          upstream_ms: 42,
          channel: 'openai-b',
          attempts: 2,
          price_id: null,
          prices: null,
        },
      ]);
      assert.equal((await findHold(ctx.store().db, holdId))?.state, 'settled');
    });

    test('releasing returns the whole hold and records no usage', async () => {
      const { id } = await funded(10_000);
      const { holdId } = await holdFunds(ctx.store(), { accountId: id, amountMicros: 3_000, ...call, now: 20 });
      assert.deepEqual(await releaseHold(ctx.store(), holdId, { note: 'upstream refused', now: 30 }), { applied: true });
      assert.deepEqual(await balances(id), { balance: 10_000, held: 0 });
      assert.deepEqual(
        (await ledgerOf(ctx, id))[0],
        row(id, {
          kind: 'release',
          balance_delta_micros: 3_000,
          held_delta_micros: -3_000,
          hold_id: holdId,
          request_id: 'req_1',
          model: 'chat-small',
          note: 'upstream refused',
          created_at: 30,
        }),
      );
      assert.deepEqual(await listUsage(ctx.store().db, { accountId: id }), []);
    });

    test('a hold is ended exactly once, whichever of settle and release comes second', async () => {
      const { id } = await funded(10_000);
      const settled = (await holdFunds(ctx.store(), { accountId: id, amountMicros: 3_000, ...call })).holdId;
      const released = (await holdFunds(ctx.store(), { accountId: id, amountMicros: 2_000, ...call })).holdId;
      await settleHold(ctx.store(), settled, { chargeMicros: 1_000, units: { call: 1 } });
      await releaseHold(ctx.store(), released);
      const before = { balances: await balances(id), ledger: await ledgerOf(ctx, id) };

      assert.deepEqual(await settleHold(ctx.store(), settled, { chargeMicros: 2_500, units: { call: 1 } }), {
        applied: false,
        chargedMicros: 1_000,
        unbilledMicros: 0,
      });
      assert.deepEqual(await releaseHold(ctx.store(), settled), { applied: false });
      assert.deepEqual(await releaseHold(ctx.store(), released), { applied: false });
      assert.deepEqual(await settleHold(ctx.store(), released, { chargeMicros: 500, units: { call: 1 } }), {
        applied: false,
        chargedMicros: 0,
        unbilledMicros: 0,
      });
      assert.deepEqual({ balances: await balances(id), ledger: await ledgerOf(ctx, id) }, before);
      assert.equal((await listUsage(ctx.store().db, { accountId: id })).length, 1);
    });

    test('settling or releasing an unknown hold is 404', async () => {
      await assert.rejects(settleHold(ctx.store(), 'hold_none', { chargeMicros: 0, units: {} }), withStatus(404));
      await assert.rejects(releaseHold(ctx.store(), 'hold_none'), withStatus(404));
    });

    test('a charge above the hold takes only the hold, the excess recorded as unbilled and flagged', async () => {
      const { id } = await funded(5_000);
      const { holdId } = await holdFunds(ctx.store(), { accountId: id, amountMicros: 1_000, ...call });
      assert.deepEqual(await settleHold(ctx.store(), holdId, { chargeMicros: 1_500, units: { output_token: 900 } }), {
        applied: true,
        chargedMicros: 1_000,
        unbilledMicros: 500,
      });
      assert.deepEqual(await balances(id), { balance: 4_000, held: 0 });
      const [usage] = await listUsage(ctx.store().db, { accountId: id });
      assert.deepEqual([usage?.amount_micros, usage?.unbilled_micros, usage?.flags], [1_000, 500, 'capped']);
      assert.equal((await findHold(ctx.store().db, holdId))?.charged_micros, 1_000);
      assert.equal((await checkAccountBalance(ctx.store(), id)).consistent, true);
    });

    test('an account with an overdraft pays beyond the hold down to minus the overdraft, never further', async () => {
      const { id } = await createAccount(ctx.store(), { name: 'trusted', creditMicros: 1_000, overdraftMicros: 300 });
      const first = await holdFunds(ctx.store(), { accountId: id, amountMicros: 500, ...call });
      const second = await holdFunds(ctx.store(), { accountId: id, amountMicros: 500, ...call });
      assert.deepEqual(await settleHold(ctx.store(), first.holdId, { chargeMicros: 900, units: { call: 1 } }), {
        applied: true,
        chargedMicros: 800,
        unbilledMicros: 100,
      });
      assert.deepEqual(await balances(id), { balance: -300, held: 500 });
      assert.deepEqual(await settleHold(ctx.store(), second.holdId, { chargeMicros: 700, units: { call: 1 } }), {
        applied: true,
        chargedMicros: 500,
        unbilledMicros: 200,
      });
      assert.deepEqual(await balances(id), { balance: -300, held: 0 });
      await assert.rejects(holdFunds(ctx.store(), { accountId: id, amountMicros: 1, ...call }), withStatus(402));
      assert.equal((await checkAccountBalance(ctx.store(), id)).consistent, true);
    });

    test('a credit that would take the balance past what both stores keep exactly is refused with 400', async () => {
      const { id } = await funded(Number.MAX_SAFE_INTEGER - 10);
      await assert.rejects(creditAccount(ctx.store(), { accountId: id, amountMicros: 11 }), withStatus(400));
      await creditAccount(ctx.store(), { accountId: id, amountMicros: 10 });
      assert.deepEqual(await balances(id), { balance: Number.MAX_SAFE_INTEGER, held: 0 });
      await assert.rejects(creditAccount(ctx.store(), { accountId: id, amountMicros: 1 }), withStatus(400));
      await assert.rejects(createAccount(ctx.store(), { name: 'huge', creditMicros: Number.MAX_SAFE_INTEGER + 1 }), withStatus(400));
      assert.equal((await checkAccountBalance(ctx.store(), id)).consistent, true);
    });

    test('a hold larger than the balance is refused with 402 and moves nothing', async () => {
      const { id } = await funded(1_000);
      await assert.rejects(holdFunds(ctx.store(), { accountId: id, amountMicros: 1_001, ...call }), withStatus(402));
      assert.deepEqual(await balances(id), { balance: 1_000, held: 0 });
      assert.equal((await ledgerOf(ctx, id)).length, 1);
    });

    test('a zero-price call still writes a usage row of amount 0', async () => {
      const { id } = await funded(0);
      const { holdId } = await holdFunds(ctx.store(), { accountId: id, amountMicros: 0, ...call, endpoint: '/v1/erase' });
      assert.deepEqual(await settleHold(ctx.store(), holdId, { chargeMicros: 0, units: { second: 42 } }), {
        applied: true,
        chargedMicros: 0,
        unbilledMicros: 0,
      });
      const usage = await listUsage(ctx.store().db, { accountId: id });
      assert.deepEqual(
        usage.map((u) => [u.endpoint, u.units, u.amount_micros]),
        [['/v1/erase', '{"second":42}', 0]],
      );
      assert.deepEqual(
        (await ledgerOf(ctx, id)).map((r) => [r.kind, r.balance_delta_micros, r.held_delta_micros]),
        [
          ['settle', 0, 0],
          ['hold', 0, 0],
        ],
      );
    });

    test('crediting adds to the balance with a credit row; unknown accounts are 404', async () => {
      const { id } = await funded(100);
      const after = await creditAccount(ctx.store(), { accountId: id, amountMicros: 900, note: 'top-up', now: 40 });
      assert.equal(after.balance_micros, 1_000);
      assert.deepEqual((await ledgerOf(ctx, id))[0], row(id, { kind: 'credit', balance_delta_micros: 900, note: 'top-up', created_at: 40 }));
      await assert.rejects(creditAccount(ctx.store(), { accountId: 'acct_none', amountMicros: 1 }), withStatus(404));
      await assert.rejects(holdFunds(ctx.store(), { accountId: 'acct_none', amountMicros: 1, ...call }), withStatus(404));
    });

    test('money that is not a whole number of micros is refused with 400 before anything moves', async () => {
      const { id } = await funded(1_000);
      await assert.rejects(creditAccount(ctx.store(), { accountId: id, amountMicros: 1.5 }), withStatus(400));
      await assert.rejects(creditAccount(ctx.store(), { accountId: id, amountMicros: 0 }), withStatus(400));
      await assert.rejects(holdFunds(ctx.store(), { accountId: id, amountMicros: Number.NaN, ...call }), withStatus(400));
      await assert.rejects(holdFunds(ctx.store(), { accountId: id, amountMicros: -1, ...call }), withStatus(400));
      const { holdId } = await holdFunds(ctx.store(), { accountId: id, amountMicros: 10, ...call });
      await assert.rejects(settleHold(ctx.store(), holdId, { chargeMicros: 0.1, units: {} }), withStatus(400));
      await assert.rejects(settleHold(ctx.store(), holdId, { chargeMicros: 2 ** 53, units: {} }), withStatus(400));
      assert.equal((await findHold(ctx.store().db, holdId))?.state, 'open');
    });
  });

  describe('orphaned holds', () => {
    test('open holds of plain calls whose instance stopped heartbeating are orphaned; task holds and live instances are not', async () => {
      const { id } = await funded(10_000);
      const db = ctx.store().db;
      await registerInstance(db, { id: 'inst_dead', now: 1_000 });
      await registerInstance(db, { id: 'inst_live', now: 1_000 });
      await heartbeat(db, { id: 'inst_live', now: 9_000 });
      const hold = (instanceId: string | null, taskId: string | null = null, now = 2_000) =>
        holdFunds(ctx.store(), { accountId: id, amountMicros: 10, ...call, taskId, instanceId, now }).then((h) => h.holdId);
      const orphan = await hold('inst_dead');
      await hold('inst_live');
      await hold(null, 'task_1');
      const ended = await hold('inst_dead');
      await releaseHold(ctx.store(), ended);
      const vanished = await hold('inst_never_registered');
      const legacy = await hold(null, null, 500);
      await hold(null, null, 5_000);
      const found = await listOrphanedHolds(db, { heartbeatBefore: 5_000, legacyCreatedBefore: 1_000, limit: 100 });
      assert.deepEqual(new Set(found.map((h) => h.id)), new Set([orphan, vanished, legacy]));
    });
  });
}
