// Contract of the plain queries: migrations, accounts, API keys, idempotency records, task attempts.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { issueApiKey } from '../../src/billing/api-keys.js';
import { findAccount, setWebhookSecret } from '../../src/store/accounts.js';
import { findApiKeyByHash, revokeApiKey } from '../../src/store/api-keys.js';
import { abandonIdempotent, beginIdempotent, completeIdempotent, IDEMPOTENCY_TTL_MS, keepAnswerLate } from '../../src/store/idempotency.js';
import { migrateToLatest } from '../../src/store/migrations.js';
import { openStore, type Store } from '../../src/store/open.js';
import type { TaskStatus } from '../../src/store/schema.js';
import { claimDueTasks, findTask, insertTask, mayHaveDueTasks, startGenerationAttempt } from '../../src/store/tasks.js';
import type { StoreContext } from './store-context.js';

// In the order they ran on a new store.
const EVERY_MIGRATION = [
  '001_initial',
  '002_task_records_and_assets',
  '003_money_at_the_edges',
  '004_task_generation_attempts',
  '005_webhook_receivers',
  '006_file_expiry',
  '007_client_request_ids',
  '008_idempotency_request_ids',
  '009_open_holds_indexes',
  '010_account_reads',
  '011_console_sessions',
  '012_key_limits',
  '013_channel_routing',
  '014_test_mode',
  '015_sqlite_ledger_chain',
  '016_recent_usage',
  '017_sqlite_fewer_pages',
  '018_sqlite_chain_by_hot_ledger',
  '019_one_open_holds_index',
  '020_no_ledger_hold_index',
  '021_sqlite_holds_without_rowid',
  '022_sqlite_recent_usage_unkeyed',
  '023_account_suspension',
  '024_batches',
  '025_price_dimensions',
  '026_redemption_codes',
  '027_card_payments',
  '028_low_balance',
  '029_usage_price_lists',
  '030_sqlite_chain_by_writers',
].map((name) => ({ name }));

const appliedMigrations = (store: Store) =>
  store.db
    .selectFrom('kysely_migration' as never)
    .select('name' as never)
    .execute();

export function queryContract(ctx: StoreContext): void {
  describe('migrations', () => {
    test('migrating an up-to-date store again changes nothing and keeps its rows', async () => {
      const account = await createAccount(ctx.store(), { name: 'kept', creditMicros: 5, now: 1 });
      await migrateToLatest(ctx.store().db, ctx.store().dialect);
      const reopened = await openStore(ctx.url());
      try {
        assert.deepEqual(await appliedMigrations(reopened), EVERY_MIGRATION);
        assert.deepEqual(await findAccount(reopened.db, account.id), account);
      } finally {
        await reopened.close();
      }
    });

    test('two stores opening one empty database at once both migrate it without error', async () => {
      const url = ctx.makeUrl();
      const stores = await Promise.all([openStore(url), openStore(url)]);
      try {
        assert.deepEqual(await appliedMigrations(stores[0]!), EVERY_MIGRATION);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });
  });

  describe('accounts', () => {
    test('a new account starts with its credit, nothing held and a fresh webhook secret', async () => {
      const account = await createAccount(ctx.store(), { name: 'acme', creditMicros: 2_000_000, now: 50 });
      assert.match(account.id, /^acct_[0-9A-Za-z]{22}$/);
      assert.match(account.webhook_secret, /^whsec_[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(await findAccount(ctx.store().db, account.id), {
        id: account.id,
        name: 'acme',
        balance_micros: 2_000_000,
        held_micros: 0,
        webhook_secret: account.webhook_secret,
        created_at: 50,
        overdraft_micros: 0,
        livemode: 1,
        live_account_id: null,
        suspended_at: null,
        low_balance_micros: null,
        low_balance_since: null,
        webhook_url: null,
        plan: null,
      });
    });

    test('setting the webhook secret replaces it, and an unknown account reports false', async () => {
      const { id } = await createAccount(ctx.store(), { name: 'acme', now: 1 });
      assert.equal(await setWebhookSecret(ctx.store().db, { accountId: id, secret: 'whsec_new' }), true);
      assert.equal((await findAccount(ctx.store().db, id))?.webhook_secret, 'whsec_new');
      assert.equal(await setWebhookSecret(ctx.store().db, { accountId: 'acct_none', secret: 'x' }), false);
    });
  });

  describe('API keys', () => {
    test('an issued key is stored as its sha256 hash and a short prefix only', async () => {
      const { id: accountId } = await createAccount(ctx.store(), { name: 'acme', now: 1 });
      const { key, row } = await issueApiKey(ctx.store(), { accountId, name: 'ci', rpm: 60, now: 7 });
      const stored = await ctx.store().db.selectFrom('api_keys').selectAll().execute();
      assert.deepEqual(stored, [
        {
          id: row.id,
          account_id: accountId,
          name: 'ci',
          key_hash: createHash('sha256').update(key).digest('hex'),
          prefix: row.prefix,
          rpm: 60,
          created_at: 7,
          revoked_at: null,
          last_used_at: null,
          allowed_models: null,
          daily_cap_micros: null,
          monthly_cap_micros: null,
          expires_at: null,
        },
      ]);
      assert.ok(key.startsWith(row.prefix) && row.prefix.length <= 12, `prefix ${row.prefix} is a short head of the key`);
      assert.ok(!JSON.stringify(stored).includes(key.slice(row.prefix.length)), 'no column holds the rest of the key');
    });

    test('a key is found by its hash, and revoking it stamps the first revocation only', async () => {
      const { id: accountId } = await createAccount(ctx.store(), { name: 'acme', now: 1 });
      const { row } = await issueApiKey(ctx.store(), { accountId, now: 7 });
      // Found with its account's mode and suspension, which authentication needs (billing/test-mode.ts).
      assert.deepEqual(await findApiKeyByHash(ctx.store().db, row.key_hash), { ...row, account_livemode: 1, account_suspended_at: null });
      assert.equal(await findApiKeyByHash(ctx.store().db, 'f'.repeat(64)), undefined);
      assert.equal(await revokeApiKey(ctx.store().db, { keyId: row.id, now: 9 }), true);
      assert.equal(await revokeApiKey(ctx.store().db, { keyId: row.id, now: 10 }), false);
      assert.deepEqual(await findApiKeyByHash(ctx.store().db, row.key_hash), { ...row, account_livemode: 1, account_suspended_at: null, revoked_at: 9 });
    });
  });

  describe('idempotency records', () => {
    const T0 = 1_700_000_000_000;
    // Each test gets its own account; `begin` and `complete` speak for it.
    const records = async () => {
      const { id: accountId } = await createAccount(ctx.store(), { name: 'idem', now: 1 });
      const db = ctx.store().db;
      return {
        accountId,
        begin: (key: string, bodyHash: string, now = T0) => beginIdempotent(db, { accountId, key, bodyHash, now }),
        complete: (key: string, statusCode: number, body: string) => completeIdempotent(db, { accountId, key, statusCode, body }),
        abandon: (key: string) => abandonIdempotent(db, { accountId, key }),
      };
    };

    test('a first request starts; the same key while it runs is told it is running', async () => {
      const { begin } = await records();
      assert.deepEqual(await begin('k1', 'h1'), { kind: 'started' });
      assert.deepEqual(await begin('k1', 'h1'), { kind: 'running' });
    });

    test('a completed request is replayed with its status and body', async () => {
      const { begin, complete } = await records();
      await begin('k1', 'h1');
      assert.equal(await complete('k1', 201, '{"id":"task_1"}'), true);
      assert.deepEqual(await begin('k1', 'h1', T0 + 1000), { kind: 'replay', statusCode: 201, body: '{"id":"task_1"}' });
    });

    test('the same key with a different body is a mismatch, running or done', async () => {
      const { begin, complete } = await records();
      await begin('k1', 'h1');
      assert.deepEqual(await begin('k1', 'h2'), { kind: 'mismatch' });
      await complete('k1', 200, 'ok');
      assert.deepEqual(await begin('k1', 'h2'), { kind: 'mismatch' });
    });

    test('abandoning a running request lets the retry start, but a finished answer is kept', async () => {
      const { begin, complete, abandon } = await records();
      await begin('k1', 'h1');
      assert.equal(await abandon('k1'), true);
      assert.deepEqual(await begin('k1', 'h1'), { kind: 'started' });
      await complete('k1', 200, 'ok');
      assert.equal(await abandon('k1'), false);
      assert.deepEqual(await begin('k1', 'h1'), { kind: 'replay', statusCode: 200, body: 'ok' });
    });

    test('a record older than 24 hours is treated as absent and replaced', async () => {
      const { begin, complete } = await records();
      await begin('k1', 'h1');
      await complete('k1', 200, 'old');
      assert.deepEqual(await begin('k1', 'h2', T0 + IDEMPOTENCY_TTL_MS - 1), { kind: 'mismatch' });
      assert.deepEqual(await begin('k1', 'h2', T0 + IDEMPOTENCY_TTL_MS + 1), { kind: 'started' });
      assert.deepEqual(await begin('k1', 'h2', T0 + IDEMPOTENCY_TTL_MS + 2), { kind: 'running' });
    });

    test('an answer kept late lands on the record its request began, or anew when a sweep removed it, never on another request’s', async () => {
      const { accountId, begin, abandon } = await records();
      const db = ctx.store().db;
      const late = (key: string, requestId: string, body: string) =>
        keepAnswerLate(db, { accountId, key, bodyHash: 'h1', requestId, instanceId: 'inst_a', startedAt: T0, statusCode: 200, body });
      await beginIdempotent(db, { accountId, key: 'began', bodyHash: 'h1', now: T0, requestId: 'req_1' });
      await late('began', 'req_1', 'first');
      assert.deepEqual(await begin('began', 'h1'), { kind: 'replay', statusCode: 200, body: 'first' });

      await beginIdempotent(db, { accountId, key: 'swept', bodyHash: 'h1', now: T0, requestId: 'req_2' });
      await abandon('swept'); // as the sweep of a dead-looking instance removes it
      await late('swept', 'req_2', 'second');
      assert.deepEqual(await begin('swept', 'h1'), { kind: 'replay', statusCode: 200, body: 'second' });

      await beginIdempotent(db, { accountId, key: 'retried', bodyHash: 'h1', now: T0, requestId: 'req_4' });
      await late('retried', 'req_3', 'stale');
      assert.deepEqual(await begin('retried', 'h1'), { kind: 'running' }, 'the retry running under the key is left alone');
    });

    test('keys are per account: the same key from another account starts afresh', async () => {
      const first = await records();
      const second = await records();
      await first.begin('k1', 'h1');
      assert.deepEqual(await second.begin('k1', 'h1'), { kind: 'started' });
    });

    test('of many simultaneous first requests with one key, exactly one starts', async () => {
      const { begin } = await records();
      const answers = await Promise.all(Array.from({ length: 20 }, () => begin('k1', 'h1')));
      assert.equal(answers.filter((a) => a.kind === 'started').length, 1);
      assert.equal(answers.filter((a) => a.kind === 'running').length, 19);
    });
  });

  describe('task generation attempts', () => {
    test('a task starts with none; only the lease holder of a live task counts one, and it shows processing', async () => {
      const { id: accountId } = await createAccount(ctx.store(), { name: 'gen', now: 1 });
      const db = ctx.store().db;
      await insertTask(db, {
        id: 'img_1',
        account_id: accountId,
        key_id: null,
        request_id: null,
        kind: 'image',
        model: 'm',
        status: 'queued',
        upstream_id: null,
        hold_id: null,
        request: '{}',
        result: null,
        error: null,
        upstream_record: null,
        callback_url: null,
        attempts: 0,
        next_poll_at: 0,
        lease_until: null,
        lease_owner: null,
        created_at: 1,
        updated_at: 1,
        finished_at: null,
      });
      assert.equal((await findTask(db, 'img_1'))!.generation_attempts, 0);
      await claimDueTasks(db, { dialect: ctx.store().dialect, now: 10, leaseMs: 100, owner: 'engine_a', limit: 1 });

      assert.equal(await startGenerationAttempt(db, { id: 'img_1', owner: 'engine_b', now: 11 }), false);
      assert.equal(await startGenerationAttempt(db, { id: 'img_1', owner: 'engine_a', now: 12 }), true);
      const task = (await findTask(db, 'img_1'))!;
      assert.deepEqual(
        { attempts: task.generation_attempts, status: task.status, updated: task.updated_at },
        { attempts: 1, status: 'processing', updated: 12 },
      );
    });
  });

  describe('tasks due to be polled', () => {
    const insertDueAt = async (id: string, status: TaskStatus, nextPollAt: number) => {
      const { id: accountId } = await createAccount(ctx.store(), { name: 'due', now: 1 });
      await insertTask(ctx.store().db, {
        ...{ id, account_id: accountId, key_id: null, request_id: null, kind: 'image', model: 'm', status, upstream_id: null, hold_id: null },
        ...{ request: '{}', result: null, error: null, upstream_record: null, callback_url: null, attempts: 0 },
        ...{ next_poll_at: nextPollAt, lease_until: null, lease_owner: null, created_at: 1, updated_at: 1, finished_at: null },
      });
    };

    test('a claim could take a task only when a live one is due: the engine asks first, leases aside', async () => {
      const db = ctx.store().db;
      const mayHave = (now: number) => mayHaveDueTasks(db, now);
      assert.equal(await mayHave(100), false, 'no tasks');
      await insertDueAt('img_done', 'succeeded', 0);
      await insertDueAt('img_failed', 'failed', 0);
      assert.equal(await mayHave(100), false, 'finished tasks are never polled');
      await insertDueAt('img_later', 'queued', 50);
      assert.deepEqual([await mayHave(49), await mayHave(50)], [false, true]);
      const claimed = await claimDueTasks(db, { dialect: ctx.store().dialect, now: 50, leaseMs: 100, owner: 'engine_a', limit: 5 });
      assert.deepEqual(
        claimed.map((t) => t.id),
        ['img_later'],
      );
      // Leased, still due: the engine's next pass still runs its claim, which finds nothing to take.
      assert.equal(await mayHave(60), true);
    });
  });
}
