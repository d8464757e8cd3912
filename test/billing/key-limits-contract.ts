// Contract of a key's spend caps on a real store: holds reserve in the key's day and month
// counters in their own transaction, settles and releases correct them, concurrent holds never
// pass a cap together, and the account's money rules hold throughout.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { type KeyLimits, spendPeriodsAt } from '../../src/billing/key-limits.js';
import { holdFunds, releaseHold, settleHold } from '../../src/billing/ledger.js';
import { GatewayError } from '../../src/errors.js';
import { keySpendNow, keySpentSince, resetKeySpend } from '../../src/store/key-spend.js';
import type { StoreContext } from '../store/store-context.js';

const NOW = Date.UTC(2026, 10, 22, 12);
const limits = (caps: Partial<KeyLimits>): KeyLimits => ({ allowedModels: null, dailyCapMicros: null, monthlyCapMicros: null, expiresAt: null, ...caps });
const capError = (name: 'daily' | 'monthly') => (error: unknown) =>
  error instanceof GatewayError && error.status === 402 && error.type === 'billing_error' && error.message.includes(`${name} spend cap`);

export function keyLimitsContract(ctx: StoreContext): void {
  const call = { model: 'chat-small', endpoint: '/v1/chat/completions' };
  let n = 0;
  const hold = (accountId: string, keyLimits: KeyLimits, amountMicros: number, now = NOW) =>
    holdFunds(ctx.store(), { accountId, keyId: 'key_capped', keyLimits, amountMicros, requestId: `req_${++n}`, ...call, now });
  const spend = async (now = NOW) => (await keySpendNow(ctx.store().db, ['key_capped'], now)).get('key_capped');
  const account = async () => (await createAccount(ctx.store(), { name: 'capped', creditMicros: 1_000_000, now: NOW })).id;

  describe('key spend caps', () => {
    test('a hold past the daily cap is refused with 402 naming the daily cap, and takes nothing', async () => {
      const id = await account();
      const daily = limits({ dailyCapMicros: 1_000 });
      await hold(id, daily, 600);
      await assert.rejects(hold(id, daily, 500), capError('daily'));
      assert.deepEqual(await spend(), { dayMicros: 600, monthMicros: 0 });
      const balance = await checkAccountBalance(ctx.store(), id);
      assert.deepEqual([balance.balanceMicros, balance.heldMicros, balance.consistent], [999_400, 600, true]);
    });

    test('a settle moves the counter to the real charge, and a release gives the hold back', async () => {
      const id = await account();
      const daily = limits({ dailyCapMicros: 1_000 });
      const settled = await hold(id, daily, 600);
      const released = await hold(id, daily, 400);
      assert.deepEqual(await spend(), { dayMicros: 1_000, monthMicros: 0 });
      assert.equal((await settleHold(ctx.store(), settled.holdId, { chargeMicros: 250, units: { input_token: 1 }, now: NOW + 1 })).applied, true);
      assert.equal((await releaseHold(ctx.store(), released.holdId, { now: NOW + 2 })).applied, true);
      assert.deepEqual(await spend(), { dayMicros: 250, monthMicros: 0 });
      // What the settle and release freed can be held again, up to the cap and no further.
      await hold(id, daily, 750);
      await assert.rejects(hold(id, daily, 1), capError('daily'));
      assert.equal((await checkAccountBalance(ctx.store(), id)).consistent, true);
    });

    test('a key’s spend since an instant is its settled charges and open holds since then, no other key’s', async () => {
      const id = await account();
      const daily = limits({ dailyCapMicros: 10_000 });
      const settled = await hold(id, daily, 600);
      await settleHold(ctx.store(), settled.holdId, { chargeMicros: 250, units: { input_token: 1 }, now: NOW + 1 });
      await hold(id, daily, 400);
      await holdFunds(ctx.store(), { accountId: id, keyId: 'key_other', amountMicros: 900, requestId: `req_${++n}`, ...call, now: NOW });
      const since = (at: number) => keySpentSince(ctx.store().db, { keyId: 'key_capped', accountId: id, since: at });
      assert.deepEqual([await since(NOW), await since(NOW + 2)], [650, 0]);
    });

    test('a hold ended twice moves the counter once', async () => {
      const id = await account();
      const daily = limits({ dailyCapMicros: 1_000 });
      const { holdId } = await hold(id, daily, 600);
      const ends = await Promise.all([
        settleHold(ctx.store(), holdId, { chargeMicros: 100, units: {}, now: NOW + 1 }),
        settleHold(ctx.store(), holdId, { chargeMicros: 100, units: {}, now: NOW + 1 }),
        releaseHold(ctx.store(), holdId, { now: NOW + 1 }),
      ]);
      assert.equal(ends.filter((end) => end.applied).length, 1);
      const { dayMicros } = (await spend())!;
      assert.ok(dayMicros === 100 || dayMicros === 0, `the counter moved once: ${dayMicros}`);
    });

    test('the monthly cap holds across days, and a new day starts the daily counter at nothing', async () => {
      const id = await account();
      const both = limits({ dailyCapMicros: 700, monthlyCapMicros: 1_000 });
      await hold(id, both, 600);
      await assert.rejects(hold(id, both, 200), capError('daily'));
      const nextDay = NOW + 86_400_000;
      await hold(id, both, 400, nextDay);
      await assert.rejects(hold(id, both, 1, nextDay), capError('monthly'));
      assert.deepEqual(await spend(nextDay), { dayMicros: 400, monthMicros: 1_000 });
    });

    test('a hold that settles on the next day corrects the day it reserved in', async () => {
      const id = await account();
      const daily = limits({ dailyCapMicros: 1_000 });
      const { holdId } = await hold(id, daily, 800);
      await settleHold(ctx.store(), holdId, { chargeMicros: 300, units: {}, now: NOW + 86_400_000 });
      assert.deepEqual(await spend(), { dayMicros: 300, monthMicros: 0 });
      assert.deepEqual(await spend(NOW + 86_400_000), { dayMicros: 0, monthMicros: 0 });
    });

    test('forty concurrent holds on a daily cap of ten take exactly ten, and the account stays exact', async () => {
      const id = await account();
      const daily = limits({ dailyCapMicros: 1_000 });
      const results = await Promise.allSettled(Array.from({ length: 40 }, () => hold(id, daily, 100)));
      const refused = results.filter((r) => r.status === 'rejected');
      assert.equal(results.length - refused.length, 10);
      assert.ok(refused.every((r) => capError('daily')((r as PromiseRejectedResult).reason)));
      assert.deepEqual(await spend(), { dayMicros: 1_000, monthMicros: 0 });
      const balance = await checkAccountBalance(ctx.store(), id);
      assert.deepEqual([balance.heldMicros, balance.consistent], [1_000, true]);
    });

    test('concurrent settles, releases and holds keep the counter equal to open holds plus charges', async () => {
      const id = await account();
      const daily = limits({ dailyCapMicros: 5_000 });
      const first = await Promise.all(Array.from({ length: 20 }, () => hold(id, daily, 200)));
      const mixed = await Promise.allSettled([
        ...first.map((h, i) =>
          i % 2 === 0 ? settleHold(ctx.store(), h.holdId, { chargeMicros: 50, units: {}, now: NOW + 1 }) : releaseHold(ctx.store(), h.holdId, { now: NOW + 1 }),
        ),
        ...Array.from({ length: 30 }, () => hold(id, daily, 200)),
      ]);
      const newHolds = mixed.slice(20).filter((r) => r.status === 'fulfilled').length;
      // Ten settles at 50 stay counted; every new hold that was taken holds 200.
      assert.deepEqual(await spend(), { dayMicros: 10 * 50 + newHolds * 200, monthMicros: 0 });
      assert.ok((await spend())!.dayMicros <= 5_000);
      assert.equal((await checkAccountBalance(ctx.store(), id)).consistent, true);
    });

    test('a cap set on a key that already spent today counts that spend', async () => {
      const id = await account();
      const { holdId } = await holdFunds(ctx.store(), { accountId: id, keyId: 'key_capped', amountMicros: 900, requestId: 'req_before', ...call, now: NOW });
      await settleHold(ctx.store(), holdId, { chargeMicros: 700, units: {}, now: NOW + 1 });
      await resetKeySpend(ctx.store().db, 'key_capped'); // as the account API does when a cap is set
      const daily = limits({ dailyCapMicros: 1_000 });
      await assert.rejects(hold(id, daily, 400, NOW + 2), capError('daily'));
      await hold(id, daily, 300, NOW + 2);
      assert.deepEqual(await spend(), { dayMicros: 1_000, monthMicros: 0 });
    });

    test('periods are UTC days and months', () => {
      assert.deepEqual(spendPeriodsAt(Date.UTC(2026, 0, 31, 23, 59, 59, 999)), {
        day: { period: 'd2026-01-31', startsAt: Date.UTC(2026, 0, 31) },
        month: { period: 'm2026-01', startsAt: Date.UTC(2026, 0, 1) },
      });
    });
  });
}
