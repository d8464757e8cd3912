// Any sequence of money steps keeps `balance + held == sum(ledger)`, never a negative balance, and matches a simple model.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkAccountBalance, createAccount, creditAccount } from '../../src/billing/accounts.js';
import { holdFunds, releaseHold, settleHold } from '../../src/billing/ledger.js';
import { GatewayError } from '../../src/errors.js';
import type { StoreContext } from '../store/store-context.js';

type Step =
  | { op: 'credit'; amount: number }
  | { op: 'hold'; amount: number }
  | { op: 'settle'; pick: number; charge: number }
  | { op: 'release'; pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('credit' as const), amount: fc.integer({ min: 1, max: 5_000 }) }),
  fc.record({ op: fc.constant('hold' as const), amount: fc.integer({ min: 0, max: 3_000 }) }),
  fc.record({ op: fc.constant('settle' as const), pick: fc.nat(), charge: fc.integer({ min: 0, max: 4_000 }) }),
  fc.record({ op: fc.constant('release' as const), pick: fc.nat() }),
);

export function invariantContract(ctx: StoreContext): void {
  test('after any sequence of credits, holds, settlements and releases the ledger sums to balance and held', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 5_000 }), fc.array(step, { maxLength: 25 }), async (credit, steps) => {
        const store = ctx.store();
        const { id: accountId } = await createAccount(store, { name: 'prop', creditMicros: credit });
        const model = { balance: credit, held: 0 };
        // Every hold ever made, ended or not: picking an ended one checks the exactly-once rule too.
        const holds: { id: string; amount: number; open: boolean }[] = [];
        for (const s of steps) {
          if (s.op === 'credit') {
            await creditAccount(store, { accountId, amountMicros: s.amount });
            model.balance += s.amount;
          } else if (s.op === 'hold') {
            const affordable = model.balance >= s.amount;
            const result = await holdFunds(store, {
              accountId,
              amountMicros: s.amount,
              requestId: 'req',
              model: 'm',
              endpoint: '/e',
            }).catch((error: unknown) => error);
            if (affordable) {
              assert.ok(!(result instanceof Error), `hold of ${s.amount} on ${model.balance} should pass`);
              holds.push({ id: (result as { holdId: string }).holdId, amount: s.amount, open: true });
              model.balance -= s.amount;
              model.held += s.amount;
            } else {
              assert.ok(result instanceof GatewayError && result.status === 402);
            }
          } else if (holds.length > 0) {
            const hold = holds[s.pick % holds.length]!;
            const { applied } =
              s.op === 'settle' ? await settleHold(store, hold.id, { chargeMicros: s.charge, units: { call: 1 } }) : await releaseHold(store, hold.id);
            assert.equal(applied, hold.open);
            if (applied) {
              // A charge is capped at its hold (no overdraft by default): the balance never goes below zero.
              model.balance += hold.amount - (s.op === 'settle' ? Math.min(s.charge, hold.amount) : 0);
              model.held -= hold.amount;
              hold.open = false;
            }
          }
        }
        assert.ok(model.balance >= 0, 'the balance never goes below zero');
        assert.deepEqual(await checkAccountBalance(store, accountId), {
          balanceMicros: model.balance,
          heldMicros: model.held,
          ledgerBalanceMicros: model.balance,
          ledgerHeldMicros: model.held,
          consistent: true,
        });
      }),
      { numRuns: 25 },
    );
  });
}
