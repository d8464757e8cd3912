// The batch queries, run on SQLite by store-sqlite.test.ts and on PostgreSQL by store-postgres.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import {
  claimLines,
  countLines,
  endLine,
  endPendingLines,
  failInterruptedLines,
  lineRequestTag,
  runningLineCount,
  unfinishedLines,
} from '../../src/store/batch-lines.js';
import { claimFinishing, finishBatch, insertBatch, listAccountBatches, markCancelling, markExpiring } from '../../src/store/batches.js';
import { registerInstance } from '../../src/store/instances.js';
import { openStore, type Store } from '../../src/store/open.js';
import { type StoreUrls, storePerTest } from '../store/store-context.js';

const T0 = 1_700_000_000_000;
const charged = (requestId: string) => `charged as ${requestId}`;

export function runBatchStoreContract(label: string, makeUrl: StoreUrls): void {
  describe(`batch store on ${label}`, () => {
    const ctx = storePerTest(makeUrl);
    const db = () => ctx.store().db;

    async function batchOf(lines: number, { id = 'batch_1', createdAt = T0, expiresAt = T0 + 86_400_000 } = {}) {
      const store = ctx.store();
      const account = await createAccount(store, { name: 'batches', now: T0 });
      await insertBatch(
        db(),
        {
          id,
          account_id: account.id,
          key_id: 'key_1',
          livemode: 1,
          endpoint: '/v1/chat/completions',
          input_file_id: 'file_1',
          completion_window: '24h',
          status: 'in_progress',
          metadata: null,
          callback_url: null,
          output_file_id: null,
          error_file_id: null,
          created_at: createdAt,
          in_progress_at: createdAt,
          expires_at: expiresAt,
          finalizing_at: null,
          completed_at: null,
          expired_at: null,
          cancelling_at: null,
          cancelled_at: null,
          lease_owner: null,
          lease_until: null,
        },
        Array.from({ length: lines }, (_, i) => ({ line_no: i + 1, custom_id: `c${i + 1}`, url: '/v1/chat/completions', body: '{}' })),
      );
      return account.id;
    }
    const claim = (store: Store, owner: string, limit: number, now = T0) =>
      claimLines(store.db, { dialect: store.dialect, batchId: 'batch_1', owner, now, limit });

    test('a claim takes pending lines in order, and never the same line twice', async () => {
      await batchOf(5);
      const first = await claim(ctx.store(), 'inst_a', 2);
      const second = await claim(ctx.store(), 'inst_b', 10);
      assert.deepEqual(
        first.map((l) => l.line_no),
        [1, 2],
      );
      assert.deepEqual(
        second.map((l) => l.line_no),
        [3, 4, 5],
      );
      assert.deepEqual(await claim(ctx.store(), 'inst_a', 10), []);
      assert.ok([...first, ...second].every((l) => l.status === 'running'));
    });

    test('claimers racing on two connections never get the same line, and together get them all', async () => {
      await batchOf(200);
      const other = await openStore(ctx.url());
      try {
        const claimers = [ctx.store(), other, ctx.store(), other, ctx.store(), other];
        const claimed = await Promise.all(
          claimers.map(async (store, i) => {
            const mine: number[] = [];
            for (;;) {
              const lines = await claim(store, `inst_${i}`, 3);
              if (lines.length === 0) return mine;
              mine.push(...lines.map((l) => l.line_no));
            }
          }),
        );
        const all = claimed.flat();
        assert.equal(new Set(all).size, all.length, 'a line was claimed twice');
        assert.equal(all.length, 200);
      } finally {
        await other.close();
      }
    });

    test('a line ends once, and only by the instance that claimed it', async () => {
      await batchOf(1);
      await claim(ctx.store(), 'inst_a', 1);
      const key = { batchId: 'batch_1', lineNo: 1, now: T0 };
      assert.equal(await endLine(db(), { ...key, owner: 'inst_b' }, { status: 'succeeded' }), false);
      assert.equal(await endLine(db(), { ...key, owner: 'inst_a' }, { status: 'succeeded', statusCode: 200, inputTokens: 3, outputTokens: 4 }), true);
      assert.equal(await endLine(db(), { ...key, owner: 'inst_a' }, { status: 'failed' }), false);
      const counts = (await countLines(db(), ['batch_1'])).get('batch_1');
      assert.deepEqual(counts, { total: 1, completed: 1, failed: 0, unfinished: 0, inputTokens: 3, outputTokens: 4 });
    });

    test('running lines of a dead instance fail as interrupted; a live instance’s are left running', async () => {
      const accountId = await batchOf(4);
      await registerInstance(db(), { id: 'inst_live', now: T0 });
      await registerInstance(db(), { id: 'inst_dead', now: T0 - 60_000 });
      await claim(ctx.store(), 'inst_live', 1);
      await claim(ctx.store(), 'inst_dead', 1);
      await claim(ctx.store(), 'inst_gone', 1);
      const failed = await failInterruptedLines(db(), { heartbeatBefore: T0 - 1_000, now: T0, code: 'batch_line_interrupted', message: 'stopped', charged });
      assert.equal(failed, 2);
      assert.equal(await runningLineCount(db(), accountId), 1);
      const counts = (await countLines(db(), ['batch_1'])).get('batch_1')!;
      assert.deepEqual([counts.failed, counts.unfinished], [2, 2]);
      assert.equal((await unfinishedLines(db(), ['batch_1'])).get('batch_1'), 2);
    });

    test('an interrupted line whose call was settled keeps its request id and says it was charged', async () => {
      const accountId = await batchOf(2);
      const [settledLine, unsettledLine] = await claim(ctx.store(), 'inst_gone', 2);
      await db()
        .insertInto('usage')
        .values({
          id: 'use_1',
          account_id: accountId,
          key_id: 'key_1',
          hold_id: null,
          request_id: 'req_settled',
          model: 'sandbox-chat',
          endpoint: 'chat.completions',
          units: '{}',
          amount_micros: 5,
          created_at: T0,
          flags: null,
          client_request_id: lineRequestTag(settledLine!),
        })
        .execute();
      assert.equal(await failInterruptedLines(db(), { heartbeatBefore: T0, now: T0, code: 'batch_line_interrupted', message: 'stopped', charged }), 2);
      const lines = await db().selectFrom('batch_lines').select(['line_no', 'request_id', 'error_message']).orderBy('line_no').execute();
      assert.deepEqual(lines, [
        { line_no: settledLine!.line_no, request_id: 'req_settled', error_message: 'charged as req_settled' },
        { line_no: unsettledLine!.line_no, request_id: null, error_message: 'stopped' },
      ]);
    });

    test('the finish is taken by one instance, and only once every line has ended', async () => {
      await batchOf(2);
      assert.equal(await claimFinishing(db(), { id: 'batch_1', owner: 'inst_a', now: T0, leaseMs: 1_000 }), undefined);
      await claim(ctx.store(), 'inst_a', 1);
      await endPendingLines(db(), { batchId: 'batch_1', now: T0, status: 'failed', code: 'insufficient_balance' });
      assert.equal(await claimFinishing(db(), { id: 'batch_1', owner: 'inst_a', now: T0, leaseMs: 1_000 }), undefined, 'a line is still running');
      await endLine(db(), { batchId: 'batch_1', lineNo: 1, owner: 'inst_a', now: T0 }, { status: 'succeeded' });
      const taken = await claimFinishing(db(), { id: 'batch_1', owner: 'inst_a', now: T0, leaseMs: 1_000 });
      assert.equal(taken?.status, 'finalizing');
      assert.equal(await claimFinishing(db(), { id: 'batch_1', owner: 'inst_b', now: T0 + 10, leaseMs: 1_000 }), undefined, 'under lease');
      const after = await claimFinishing(db(), { id: 'batch_1', owner: 'inst_b', now: T0 + 2_000, leaseMs: 1_000 });
      assert.equal(after?.lease_owner, 'inst_b', 'taken over once the lease ran out');
      const old = { id: 'batch_1', status: 'completed' as const, now: T0, outputFileId: null, errorFileId: null };
      assert.equal(await finishBatch(db(), { ...old, owner: 'inst_a' }), undefined, 'the first owner lost its lease');
      assert.equal((await finishBatch(db(), { ...old, owner: 'inst_b' }))?.status, 'completed');
    });

    test('a cancel stops a batch in progress, and not one that ended', async () => {
      const accountId = await batchOf(2);
      assert.equal((await markCancelling(db(), { accountId, id: 'batch_1', now: T0 }))?.status, 'cancelling');
      assert.deepEqual(await claim(ctx.store(), 'inst_a', 2), [], 'no line of a cancelled batch is claimed');
      assert.equal(await markCancelling(db(), { accountId, id: 'batch_1', now: T0 }), undefined);
      assert.equal(await markCancelling(db(), { accountId: 'acct_other', id: 'batch_1', now: T0 }), undefined);
    });

    test('a batch past its window is marked expiring once', async () => {
      await batchOf(1, { expiresAt: T0 + 1_000 });
      assert.deepEqual(await markExpiring(db(), T0), []);
      assert.deepEqual(await markExpiring(db(), T0 + 1_000), ['batch_1']);
      assert.deepEqual(await claim(ctx.store(), 'inst_a', 1), [], 'no line of an expired batch is claimed');
      assert.deepEqual(await markExpiring(db(), T0 + 2_000), []);
    });

    test('the list pages newest first', async () => {
      const accountId = await batchOf(1, { id: 'batch_a', createdAt: T0 });
      await insertBatch(db(), { ...(await listAccountBatches(db(), { accountId, limit: 1 }))[0]!, id: 'batch_b', created_at: T0 + 1 }, []);
      const first = await listAccountBatches(db(), { accountId, limit: 1 });
      assert.deepEqual(
        first.map((b) => b.id),
        ['batch_b'],
      );
      const next = await listAccountBatches(db(), { accountId, limit: 5, olderThan: { createdAt: first[0]!.created_at, id: first[0]!.id } });
      assert.deepEqual(
        next.map((b) => b.id),
        ['batch_a'],
      );
    });
  });
}
