// Test twins (billing/test-mode.ts) on each backend: made once per live account, however many
// first uses race, and their money kept apart from the live account's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds } from '../../src/billing/ledger.js';
import { creditTestFunds, testBalance, testTwin } from '../../src/billing/test-mode.js';
import type { GatewayError } from '../../src/errors.js';
import { findAccount } from '../../src/store/accounts.js';
import { openStore } from '../../src/store/open.js';
import type { StoreContext } from './store-context.js';

export function testModeContract(ctx: StoreContext): void {
  describe('test twins', () => {
    test('forty simultaneous first uses, from two connections, make one twin and all of them get it', async () => {
      const live = await createAccount(ctx.store(), { name: 'racer', creditMicros: 1_000 });
      // A second store on the same database: on SQLite another connection, as a second instance would have.
      const other = await openStore(ctx.url());
      try {
        const twins = await Promise.all(Array.from({ length: 40 }, (_, i) => testTwin(i % 2 ? other : ctx.store(), live.id)));
        assert.equal(new Set(twins.map((twin) => twin.id)).size, 1);
        const [twin] = twins;
        assert.deepEqual(
          { livemode: twin!.livemode, live_account_id: twin!.live_account_id, balance: twin!.balance_micros, name: twin!.name },
          { livemode: 0, live_account_id: live.id, balance: 0, name: 'racer (test)' },
        );
        const count = await ctx
          .store()
          .db.selectFrom('accounts')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('live_account_id', '=', live.id)
          .executeTakeFirstOrThrow();
        assert.equal(Number(count.n), 1);
      } finally {
        await other.close();
      }
    });

    test('simultaneous test credits on a new account all land on its one twin, and the live balance is untouched', async () => {
      const live = await createAccount(ctx.store(), { name: 'topped', creditMicros: 5_000 });
      await Promise.all(Array.from({ length: 20 }, () => creditTestFunds(ctx.store(), { accountId: live.id, amountMicros: 250 })));
      assert.deepEqual(await testBalance(ctx.store(), live.id), { test_balance_micros: 5_000, test_held_micros: 0 });
      const twin = await testTwin(ctx.store(), live.id);
      assert.equal((await checkAccountBalance(ctx.store(), twin.id)).consistent, true);
      assert.deepEqual(await checkAccountBalance(ctx.store(), live.id), {
        balanceMicros: 5_000,
        heldMicros: 0,
        ledgerBalanceMicros: 5_000,
        ledgerHeldMicros: 0,
        consistent: true,
      });
    });

    test('a hold on the twin takes test money only: the live balance cannot pay for it', async () => {
      const live = await createAccount(ctx.store(), { name: 'apart', creditMicros: 1_000_000 });
      const twin = await testTwin(ctx.store(), live.id);
      const call = { requestId: 'req_1', model: 'm', endpoint: 'chat.completions' };
      await assert.rejects(holdFunds(ctx.store(), { accountId: twin.id, amountMicros: 1, ...call }), (error: GatewayError) => error.status === 402);
      await creditTestFunds(ctx.store(), { accountId: live.id, amountMicros: 100 });
      await holdFunds(ctx.store(), { accountId: twin.id, amountMicros: 100, ...call });
      assert.deepEqual(await testBalance(ctx.store(), live.id), { test_balance_micros: 0, test_held_micros: 100 });
      assert.equal((await findAccount(ctx.store().db, live.id))!.balance_micros, 1_000_000);
    });

    test('a twin has no twin of its own, and an unknown account has none', async () => {
      const live = await createAccount(ctx.store(), { name: 'once' });
      const twin = await testTwin(ctx.store(), live.id);
      await assert.rejects(testTwin(ctx.store(), twin.id), (error: GatewayError) => error.status === 400);
      await assert.rejects(testTwin(ctx.store(), 'acct_nope'), (error: GatewayError) => error.status === 404);
    });
  });
}
