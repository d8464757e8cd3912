// Schema changes, in order, inline so the built package needs no migration folder on disk.
import { type DatabaseIntrospector, type Kysely, type Migration, Migrator, sql } from 'kysely';
import { addBatches } from './batch-tables.js';
import { chainLedgerByAccount, chainOnlyUnchainedRows, dropLedgerChainTrigger } from './ledger-chain.js';
import { addLowBalance } from './low-balance-tables.js';
import type { MigrationDb } from './migration-db.js';
import { addCardPayments } from './payment-tables.js';
import { addPriceLists } from './price-list-tables.js';
import { addPriceTables } from './price-tables.js';
import { addRedemptionCodes } from './redemption-tables.js';
import type { DB } from './schema.js';
import { rebuildForFewerPages, rebuildHoldsWithoutRowid, rebuildRecentUsageUnkeyed } from './sqlite-pages.js';
import { createRecentUsage } from './usage-recent.js';

export type Dialect = 'sqlite' | 'postgres';

// Each migration is built per dialect: the ledger's auto-increment id is spelt differently.
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '001_initial': { up: (db) => createInitialTables(db, dialect) },
    '002_task_records_and_assets': { up: (db) => addTaskRecordsAndAssets(db) },
    '003_money_at_the_edges': { up: (db) => addMoneyAtTheEdges(db) },
    '004_task_generation_attempts': { up: (db) => addTaskGenerationAttempts(db) },
    '005_webhook_receivers': { up: (db) => addWebhookReceivers(db) },
    '006_file_expiry': { up: (db) => addFileExpiry(db) },
    '007_client_request_ids': { up: (db) => addClientRequestIds(db) },
    '008_idempotency_request_ids': { up: (db) => addIdempotencyRequestIds(db) },
    '009_open_holds_indexes': { up: (db) => indexOpenHoldsOnly(db) },
    '010_account_reads': { up: (db) => indexAccountReads(db) },
    '011_console_sessions': { up: (db) => addConsoleSessions(db) },
    '012_key_limits': { up: (db) => addKeyLimits(db) },
    '013_channel_routing': { up: (db) => addChannelRouting(db) },
    '014_test_mode': { up: (db) => addTestMode(db) },
    '015_sqlite_ledger_chain': { up: (db) => (dialect === 'sqlite' ? chainLedgerByAccount(db) : Promise.resolve()) },
    '016_recent_usage': { up: (db) => createRecentUsage(db) },
    '017_sqlite_fewer_pages': { up: (db) => (dialect === 'sqlite' ? rebuildForFewerPages(db) : Promise.resolve()) },
    '018_sqlite_chain_by_hot_ledger': { up: (db) => (dialect === 'sqlite' ? chainOnlyUnchainedRows(db) : Promise.resolve()) },
    '019_one_open_holds_index': { up: (db) => indexOpenHoldsOnce(db) },
    '020_no_ledger_hold_index': { up: (db) => dropLedgerHoldIndex(db) },
    '021_sqlite_holds_without_rowid': { up: (db) => (dialect === 'sqlite' ? rebuildHoldsWithoutRowid(db) : Promise.resolve()) },
    '022_sqlite_recent_usage_unkeyed': { up: (db) => (dialect === 'sqlite' ? rebuildRecentUsageUnkeyed(db) : Promise.resolve()) },
    '023_account_suspension': { up: (db) => addAccountSuspension(db) },
    '024_batches': { up: (db) => addBatches(db) },
    '025_price_dimensions': { up: (db) => addPriceTables(db) },
    '026_redemption_codes': { up: (db) => addRedemptionCodes(db) },
    '027_card_payments': { up: (db) => addCardPayments(db) },
    '028_low_balance': { up: (db) => addLowBalance(db) },
    '029_usage_price_lists': { up: (db) => addPriceLists(db) },
    '030_sqlite_chain_by_writers': { up: (db) => (dialect === 'sqlite' ? dropLedgerChainTrigger(db) : Promise.resolve()) },
  };
}

// The operator suspends an account (admin API): its keys are refused and its console sessions end,
// until it is resumed. Null while the account may call.
async function addAccountSuspension(db: MigrationDb): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('suspended_at', 'bigint').execute();
}

// Test mode (docs/api.md "Test mode"): an account's test money lives on a second accounts row, its
// test twin (livemode 0, live_account_id naming the live account), so every money rule applies
// to it unchanged and the two balances never mix. The unique index makes the twin one per live
// account even when two requests create it at once. A task remembers its mode, so the engine's
// polls resolve its model in the right catalogue without reading the account.
async function addTestMode(db: MigrationDb): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('livemode', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('accounts').addColumn('live_account_id', 'text').execute();
  await db.schema.createIndex('accounts_live_account_id').unique().on('accounts').column('live_account_id').execute();
  await db.schema
    .alterTable('tasks')
    .addColumn('livemode', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

// A model may be served by several channels, each with several keys (routing/). A usage row names
// the channel that served the call and how many attempts it took; a task names the channel and key
// (by fingerprint) that accepted it, since only they can answer its polls.
async function addChannelRouting(db: MigrationDb): Promise<void> {
  await db.schema.alterTable('usage').addColumn('channel', 'text').execute();
  await db.schema.alterTable('usage').addColumn('attempts', 'integer').execute();
  await db.schema.alterTable('tasks').addColumn('channel', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('channel_key', 'text').execute();
}

// A key may carry limits (billing/key-limits.ts): the models it may call, an expiry, and spend caps
// per UTC day and month. A capped key's spend is a counter per period, moved in the same
// transaction as its holds, so the cap holds under concurrent calls without summing usage rows;
// a hold names the periods it reserved in, so its settle or release moves those same counters.
// Keys without caps never touch key_spend. Usage rows also keep the channel's answer time.
async function addKeyLimits(db: MigrationDb): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('allowed_models', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('daily_cap_micros', 'bigint').execute();
  await db.schema.alterTable('api_keys').addColumn('monthly_cap_micros', 'bigint').execute();
  await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
  await db.schema.alterTable('holds').addColumn('cap_periods', 'text').execute();
  await db.schema.alterTable('usage').addColumn('upstream_ms', 'integer').execute();
  await db.schema
    .createTable('key_spend')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('spent_micros', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('key_spend_pk', ['key_id', 'period'])
    .execute();
}

// The account console signs in with a one-time link the operator issues, or with an API key, and
// then holds a session cookie. Only hashes of the link's token and of the cookie's secret are kept
// (the session's id is that hash), so a copy of the store signs no one in. The sweep deletes both
// kinds of row a day after they expire.
async function addConsoleSessions(db: MigrationDb): Promise<void> {
  await db.schema
    .createTable('console_login_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('console_login_links_expires').on('console_login_links').column('expires_at').execute();
  await db.schema
    .createTable('console_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    // How it was made: exactly one of the two is set.
    .addColumn('link_id', 'text')
    .addColumn('key_id', 'text')
    .execute();
  await db.schema.createIndex('console_sessions_expires').on('console_sessions').column('expires_at').execute();
}

// The account API (/v1/account) lists an account's webhook deliveries, which no index led to, and
// shows when each key was last used: a column the gateway writes in batches, off the calls' path
// (http/key-use.ts), rather than an index on usage that every settle would have to update.
async function indexAccountReads(db: MigrationDb): Promise<void> {
  await db.schema.createIndex('webhook_outbox_account_created').on('webhook_outbox').columns(['account_id', 'created_at']).execute();
  await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
}

// The sweeps only ever look for open holds, and a hold is open for the length of one call. Indexes
// of open holds alone stay a few pages big, and a settle deletes its entry instead of moving it to
// a settled one: every call writes fewer index pages.
async function indexOpenHoldsOnly(db: MigrationDb): Promise<void> {
  await sql`drop index if exists holds_state_created`.execute(db);
  await sql`drop index if exists holds_state_instance`.execute(db);
  await sql`create index holds_open_created on holds (created_at) where state = 'open'`.execute(db);
  await sql`create index holds_open_instance on holds (instance_id) where state = 'open'`.execute(db);
}

// One index of open holds instead of two (009): by owner, then age. Removing a dead instance seeks
// its owner; the orphan sweep reads every entry, which stays cheap because only open holds are in it.
// A hold's insert and its end then each change one index page instead of two.
async function indexOpenHoldsOnce(db: MigrationDb): Promise<void> {
  await sql`create index holds_open on holds (instance_id, created_at) where state = 'open'`.execute(db);
  await sql`drop index if exists holds_open_created`.execute(db);
  await sql`drop index if exists holds_open_instance`.execute(db);
}

// Nothing reads the ledger by hold (an account's rows are found by its chain, a hold by its own
// table), yet every ledger row, two a call, wrote an entry into this index: one page of the log in
// each commit of a hold or a settle.
async function dropLedgerHoldIndex(db: MigrationDb): Promise<void> {
  await sql`drop index if exists ledger_hold`.execute(db);
}

// A running Idempotency-Key names its request, so a crash sweep can tell whether its call was billed.
async function addIdempotencyRequestIds(db: MigrationDb): Promise<void> {
  await db.schema.alterTable('idempotency').addColumn('request_id', 'text').execute();
}

// The request id in the ledger is the gateway's own; a caller's x-request-id is kept beside it.
async function addClientRequestIds(db: MigrationDb): Promise<void> {
  await db.schema.alterTable('holds').addColumn('client_request_id', 'text').execute();
  await db.schema.alterTable('usage').addColumn('client_request_id', 'text').execute();
}

// Uploads expire (files.ttl_ms, 7 days by default) and a sweep deletes them; files stored before
// expiry existed get the default from their upload time.
async function addFileExpiry(db: MigrationDb): Promise<void> {
  await db.schema
    .alterTable('files')
    .addColumn('expires_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('files_expires').on('files').column('expires_at').execute();
  await sql`update files set expires_at = created_at + ${7 * 24 * 60 * 60 * 1000}`.execute(db);
}

// Crash recovery and bounded charges (DESIGN §3): instances heartbeat, and the holds and
// idempotency records they own say so; a stream records what it delivered as it goes; a charge
// beyond the hold plus the account's overdraft is recorded as unbilled instead of taken.
async function addMoneyAtTheEdges(db: MigrationDb): Promise<void> {
  await db.schema
    .createTable('instances')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .alterTable('accounts')
    .addColumn('overdraft_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('holds').addColumn('instance_id', 'text').execute();
  await db.schema.alterTable('holds').addColumn('progress', 'text').execute();
  await db.schema.createIndex('holds_state_instance').on('holds').columns(['state', 'instance_id']).execute();
  await db.schema
    .alterTable('usage')
    .addColumn('unbilled_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('usage').addColumn('flags', 'text').execute();
  await db.schema.alterTable('idempotency').addColumn('instance_id', 'text').execute();
}

// A generation the upstream may have performed (and charged us for) is counted before it is
// asked for, so a crash in the middle of one still counts, and the count bounds the repeats.
async function addTaskGenerationAttempts(db: MigrationDb): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('generation_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

// Webhook delivery is limited per receiver (the callback URL's origin), so a claim groups the
// outbox by it. Pending rows get theirs here; rows already final are never claimed again and
// keep ''. The origin is computed inline, not by the outbox module, so this step never changes.
async function addWebhookReceivers(db: MigrationDb): Promise<void> {
  await db.schema
    .alterTable('webhook_outbox')
    .addColumn('receiver', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  const pending: { id: string; url: string }[] = await db.selectFrom('webhook_outbox').select(['id', 'url']).where('state', '=', 'pending').execute();
  for (const { id, url } of pending) {
    let receiver = url;
    try {
      receiver = new URL(url).origin;
    } catch {
      // an unparsable URL is its own receiver; its attempts fail on the URL policy anyway
    }
    await db.updateTable('webhook_outbox').set({ receiver }).where('id', '=', id).execute();
  }
  await db.schema.createIndex('webhook_outbox_state_receiver').on('webhook_outbox').columns(['state', 'receiver', 'next_attempt_at']).execute();
}

// Tasks keep the upstream's own last record (the ARK-compatible GET answers with it) and the key
// that created them; generated media land in the account's asset library.
async function addTaskRecordsAndAssets(db: MigrationDb): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('upstream_record', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('key_id', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('request_id', 'text').execute();
  await db.schema.createIndex('tasks_upstream_id').on('tasks').columns(['upstream_id']).execute();
  await db.schema
    .createTable('assets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text')
    .addColumn('source_task_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('assets_account_kind').on('assets').columns(['account_id', 'kind', 'created_at']).execute();
}

async function createInitialTables(db: MigrationDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('balance_micros', 'bigint', (c) => c.notNull())
    .addColumn('held_micros', 'bigint', (c) => c.notNull())
    .addColumn('webhook_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('rpm', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id']).execute();

  await db.schema
    .createTable('holds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text')
    .addColumn('charged_micros', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('holds_state_created').on('holds').columns(['state', 'created_at']).execute();

  await db.schema
    .createTable('ledger')
    .$call((t) =>
      dialect === 'postgres' ? t.addColumn('id', 'bigserial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement()),
    )
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('balance_delta_micros', 'bigint', (c) => c.notNull())
    .addColumn('held_delta_micros', 'bigint', (c) => c.notNull())
    .addColumn('hold_id', 'text')
    .addColumn('request_id', 'text')
    .addColumn('model', 'text')
    .addColumn('note', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ledger_account_id').on('ledger').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('ledger_hold').on('ledger').columns(['hold_id']).execute();

  await db.schema
    .createTable('usage')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    .addColumn('hold_id', 'text')
    .addColumn('request_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('units', 'text', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('usage_account_created').on('usage').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('idempotency')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('body_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_pk', ['account_id', 'key'])
    .execute();

  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('upstream_id', 'text')
    .addColumn('hold_id', 'text')
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('callback_url', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_poll_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('tasks_status_poll').on('tasks').columns(['status', 'next_poll_at']).execute();
  await db.schema.createIndex('tasks_account_created').on('tasks').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .execute();
  await db.schema.createIndex('webhook_outbox_state_next').on('webhook_outbox').columns(['state', 'next_attempt_at']).execute();

  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text')
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('storage_path', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('files_account_created').on('files').columns(['account_id', 'created_at']).execute();
}

// On PostgreSQL Kysely's migrator holds a session advisory lock (pg_advisory_lock) around reading
// and applying the pending list, so a second process waits, then finds nothing to do. On SQLite
// the lock is a no-op: a connection that loses the race fails inside its rolled-back migration
// transaction (SQLITE_BUSY, or "table … already exists" once it sees the winner's schema), and
// its retry reads the winner's kysely_migration row and finds nothing to do.
export async function migrateToLatest(db: Kysely<DB>, dialect: Dialect): Promise<void> {
  const known = migrations(dialect);
  // The usual start: nothing to do, told by one read of our own table. Kysely's migrator would
  // first introspect every schema of the database, which is slow with many and fails while
  // another client drops one.
  if (await allApplied(db, Object.keys(known))) return;
  const migrator = new Migrator({
    db: dialect === 'postgres' ? withOwnSchemaIntrospection(db) : db,
    provider: { getMigrations: async () => known },
    // Kysely checks "does kysely_migration exist" across every schema unless told which one;
    // with a test schema per run, another schema's table would fool it. Pin it to ours.
    migrationTableSchema: dialect === 'postgres' ? await currentSchema(db) : undefined,
    // Each migration only adds (columns, tables, indexes; 009 replaces two indexes) and none depends on a later one, so a
    // store that already ran a later one still takes one it has not seen.
    allowUnorderedMigrations: true,
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return;
    if (dialect === 'sqlite' && attempt < 50 && isSqliteError(error)) {
      // The winner may still be migrating: wait a moment, then find its work done.
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
      continue;
    }
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`store migration failed${failed ? ` at ${failed}` : ''}: ${why}`, { cause: error });
  }
}

/**
 * The migrator asks "does this schema, this table exist" through `db.introspection`, which on
 * PostgreSQL lists every table of every schema: slow with many schemas, and it fails when another
 * client drops one meanwhile. Answered here from our own schema alone.
 */
function withOwnSchemaIntrospection(db: Kysely<DB>): Kysely<DB> {
  const introspection: Pick<DatabaseIntrospector, 'getSchemas' | 'getTables'> = {
    async getSchemas() {
      const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(db);
      return rows;
    },
    async getTables() {
      const { rows } = await sql<{ name: string; schema: string }>`
        select table_name as name, table_schema as schema from information_schema.tables where table_schema = current_schema()`.execute(db);
      return rows.map((row) => ({ ...row, isView: false, columns: [] }));
    },
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Whether kysely_migration (in our schema) lists every migration; false when it does not exist yet. */
async function allApplied(db: Kysely<DB>, names: string[]): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    const applied = new Set(rows.map((row) => row.name));
    return names.every((name) => applied.has(name));
  } catch {
    return false;
  }
}

async function currentSchema(db: Kysely<DB>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL search_path names no existing schema');
  return schema;
}

function isSqliteError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}
