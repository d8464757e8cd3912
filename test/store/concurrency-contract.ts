// Contract under contention: holds racing for the last funds, settle racing release, and
// (where the backend is shared) two processes racing through separate connections.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkAccountBalance, createAccount } from '../../src/billing/accounts.js';
import { holdFunds, releaseHold, settleHold } from '../../src/billing/ledger.js';
import type { GatewayError } from '../../src/errors.js';
import { LOAD_TYPESCRIPT } from '../helpers/processes.js';
import type { StoreContext } from './store-context.js';

const HOLD = 1_000;
const call = { amountMicros: HOLD, requestId: 'req', model: 'm', endpoint: '/e' };

export function concurrencyContract(ctx: StoreContext, { crossProcess }: { crossProcess: boolean }): void {
  describe('concurrency', () => {
    test('of 200 simultaneous holds on funds for exactly 100, exactly 100 pass and 100 get 402', async () => {
      const { id } = await createAccount(ctx.store(), { name: 'race', creditMicros: 100 * HOLD });
      const results = await Promise.allSettled(Array.from({ length: 200 }, () => holdFunds(ctx.store(), { accountId: id, ...call })));
      const refused = results.filter((r) => r.status === 'rejected' && (r.reason as GatewayError).status === 402);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 100);
      assert.equal(refused.length, 100);
      assert.deepEqual(await checkAccountBalance(ctx.store(), id), {
        balanceMicros: 0,
        heldMicros: 100 * HOLD,
        ledgerBalanceMicros: 0,
        ledgerHeldMicros: 100 * HOLD,
        consistent: true,
      });
    });

    test('simultaneous settles and releases of one hold apply exactly one of them', async () => {
      const { id } = await createAccount(ctx.store(), { name: 'race', creditMicros: 10 * HOLD });
      const { holdId } = await holdFunds(ctx.store(), { accountId: id, ...call });
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 ? releaseHold(ctx.store(), holdId) : settleHold(ctx.store(), holdId, { chargeMicros: 400, units: { call: 1 } }),
        ),
      );
      assert.equal(outcomes.filter((o) => o.applied).length, 1);
      const check = await checkAccountBalance(ctx.store(), id);
      assert.equal(check.consistent, true);
      assert.equal(check.heldMicros, 0);
      assert.ok([10 * HOLD, 10 * HOLD - 400].includes(check.balanceMicros), `balance ${check.balanceMicros}`);
    });

    test('200 holds split across two processes on funds for exactly 100 let exactly 100 pass', { skip: !crossProcess }, async () => {
      const { id } = await createAccount(ctx.store(), { name: 'race', creditMicros: 100 * HOLD });
      const counts = await fireFromProcesses(ctx.url(), id, [100, 100]);
      assert.deepEqual(
        counts.map((c) => c.errors),
        [[], []],
      );
      assert.equal(
        counts.reduce((n, c) => n + c.held, 0),
        100,
      );
      assert.equal(
        counts.reduce((n, c) => n + c.refused, 0),
        100,
      );
      assert.deepEqual(await checkAccountBalance(ctx.store(), id), {
        balanceMicros: 0,
        heldMicros: 100 * HOLD,
        ledgerBalanceMicros: 0,
        ledgerHeldMicros: 100 * HOLD,
        consistent: true,
      });
    });
  });
}

interface Counts {
  held: number;
  refused: number;
  errors: string[];
}

const FIXTURE = fileURLToPath(new URL('./fixtures/fire-holds.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Both children open their store first and report "ready"; only then are both told "go", so
// their holds overlap in time instead of one process finishing before the other has started.
async function fireFromProcesses(url: string, accountId: string, perProcess: number[]): Promise<Counts[]> {
  const children = perProcess.map((n) => {
    const child = spawn(process.execPath, ['--import', LOAD_TYPESCRIPT, FIXTURE, url, accountId, String(n), String(HOLD)], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const exited = once(child, 'exit').then(([code]) => {
      if (code !== 0) throw new Error(`fire-holds exited with ${code}: ${stderr}`);
    });
    return { child, lines, exited };
  });
  try {
    for (const { lines, exited } of children) {
      const first = await Promise.race([lines.next(), exited.then(() => ({ value: 'exited early' }))]);
      assert.equal(first.value, 'ready');
    }
    for (const { child } of children) child.stdin.write('go\n');
    const counts = [];
    for (const { lines, exited } of children) {
      const { value } = await lines.next();
      await exited;
      counts.push(JSON.parse(value as string) as Counts);
    }
    return counts;
  } finally {
    for (const { child } of children) if (child.exitCode === null) child.kill();
  }
}
