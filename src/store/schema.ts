// Row types of every table, as Kysely sees them. Money is integer micros, instants are epoch
// milliseconds (BIGINT on PostgreSQL, INTEGER on SQLite; both read back as JS numbers).
import type { ColumnType, Generated } from 'kysely';
import type { CardPaymentsTable, StripeEventsTable } from './payment-tables.js';
import type { PriceListsTable } from './price-list-tables.js';
import type { PriceBookTable, PriceChangesTable, PricePlansTable } from './price-tables.js';
import type { RedemptionBatchesTable, RedemptionCodesTable, RedemptionFailuresTable } from './redemption-tables.js';

export interface AccountsTable {
  id: string;
  name: string;
  balance_micros: number;
  held_micros: number;
  webhook_secret: string;
  created_at: number;
  /** How far below zero a settle may take the balance (DESIGN §3; default 0). */
  overdraft_micros: Generated<number>;
  /** 1 for a live account, 0 for a live account's test twin (docs/api.md "Test mode"). */
  livemode: Generated<number>;
  /** A test twin's live account; null on live accounts. */
  live_account_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the operator suspended the account (its keys refused, its sessions ended); null: it may call. */
  suspended_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** Funds (balance + held) below this send account.balance_low once per crossing; null: off (billing/low-balance.ts). */
  low_balance_micros: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the current crossing below low_balance_micros was noticed; null while not below it. */
  low_balance_since: ColumnType<number | null, number | null | undefined, number | null>;
  /** Where account events are POSTed, signed with webhook_secret; null: nowhere. */
  webhook_url: ColumnType<string | null, string | null | undefined, string | null>;
  /** The account's price plan (price_plans.name); null: the model's own prices. */
  plan: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A running gateway process; its heartbeat says its holds still have an owner. */
export interface InstancesTable {
  id: string;
  started_at: number;
  heartbeat_at: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  key_hash: string; // sha256 hex of the whole key; the key itself is never stored
  prefix: string; // first characters, for display
  rpm: number | null;
  created_at: number;
  revoked_at: number | null;
  /** When the key last authenticated a request, to within the key-use recorder's flush interval. */
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** JSON array of the model ids (or aliases) the key may call; null: any model. */
  allowed_models: ColumnType<string | null, string | null | undefined, string | null>;
  /** Most the key may spend per UTC day / month, in micros; null: no cap. */
  daily_cap_micros: ColumnType<number | null, number | null | undefined, number | null>;
  monthly_cap_micros: ColumnType<number | null, number | null | undefined, number | null>;
  /** After this time (ms) the key is refused like a revoked one; null: never. */
  expires_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A capped key's spend in one period ('d2026-11-22' or 'm2026-11'): settled charges plus open holds. */
export interface KeySpendTable {
  key_id: string;
  period: string;
  spent_micros: number;
}

export type HoldState = 'open' | 'settled' | 'released';

export interface HoldsTable {
  id: string;
  account_id: string;
  key_id: string | null;
  amount_micros: number;
  state: HoldState;
  request_id: string | null;
  model: string;
  endpoint: string;
  task_id: string | null;
  charged_micros: number | null;
  created_at: number;
  ended_at: number | null;
  /** The instance whose call owns the hold (null for task holds and rows from before instances). */
  instance_id: string | null;
  /** JSON units a stream has recorded as delivered so far: what a crash recovery bills. */
  progress: string | null;
  /** The caller's own x-request-id, kept beside the gateway's `request_id` (never trusted as it). */
  client_request_id: string | null;
  /** The key_spend periods this hold reserved in (comma-separated); null for a key without caps. */
  cap_periods: ColumnType<string | null, string | null | undefined, string | null>;
}

// 'debit': money taken back from the balance (a card payment refunded or lost in a dispute).
export type LedgerKind = 'credit' | 'hold' | 'settle' | 'release' | 'debit';

// A movement: balance_delta + held_delta is the change of (balance + held), so the sum of
// an account's rows equals its balance + held, and each delta column sums to its own field.
export interface LedgerTable {
  id: Generated<number>;
  account_id: string;
  kind: LedgerKind;
  balance_delta_micros: number;
  held_delta_micros: number;
  hold_id: string | null;
  request_id: string | null;
  model: string | null;
  note: string | null;
  created_at: number;
}

export interface UsageTable {
  id: string;
  account_id: string;
  key_id: string | null;
  hold_id: string | null;
  request_id: string | null;
  model: string;
  endpoint: string;
  units: string; // JSON object: unit name -> count, e.g. {"input_token":12,"output_token":30}
  amount_micros: number;
  created_at: number;
  /** What the usage came to beyond the hold plus overdraft, not taken from the balance. */
  unbilled_micros: Generated<number>;
  /** Comma-separated notes for the operator: `clamped` (usage figures made sane) and `clamped:<unit>=<figure>` for each, `capped`. */
  flags: string | null;
  client_request_id: string | null;
  /** How long the channel took to answer, in ms: the Server-Timing `upstream` figure (for a stream, to its first byte); null for tasks. */
  upstream_ms: ColumnType<number | null, number | null | undefined, number | null>;
  /** The channel that served the call, and how many attempts (channels and keys) it took; null for tasks. */
  channel: ColumnType<string | null, string | null | undefined, string | null>;
  attempts: ColumnType<number | null, number | null | undefined, number | null>;
  /** The price list the call was billed at (price_lists.id), taken when its hold was made; null when not known. */
  price_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface IdempotencyTable {
  account_id: string;
  key: string;
  body_hash: string;
  state: 'running' | 'done';
  status_code: number | null;
  response_body: string | null;
  created_at: number;
  /** The instance running the call: a dead instance's running records become retryable. */
  instance_id: string | null;
  /** The gateway's id of the request running under the key (its hold carries the same). */
  request_id: string | null;
}

export interface TasksTable {
  /** JSON: the prices the task was submitted at, which its settle applies; null: the model's prices at the settle. */
  prices: ColumnType<string | null, string | null | undefined, string | null>;
  /** The channel, and the key by fingerprint, that accepted the task (routing/task-channel.ts); null before it was. */
  channel: ColumnType<string | null, string | null | undefined, string | null>;
  channel_key: ColumnType<string | null, string | null | undefined, string | null>;
  id: string;
  account_id: string;
  kind: string;
  model: string;
  status: string;
  upstream_id: string | null;
  hold_id: string | null;
  request: string; // JSON
  result: string | null; // JSON
  error: string | null; // JSON
  callback_url: string | null;
  attempts: number;
  next_poll_at: number;
  lease_until: number | null;
  lease_owner: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  /** The upstream's own last answer about the task (JSON), as the ARK-compatible GET returns it. */
  upstream_record: string | null;
  key_id: string | null;
  request_id: string | null;
  /** Paid upstream work started for this task (an image generation), counted before each start. */
  generation_attempts: Generated<number>;
  /** 0 for a test key's task: polled on the sandbox, and its webhook says `livemode: false`. */
  livemode: Generated<number>;
}

export type TaskKind = 'image' | 'video' | 'erase' | 'minutes';
export type TaskStatus = 'submitting' | 'queued' | 'processing' | 'succeeded' | 'failed' | 'cancelled';

/** Media an account generated: the image gallery and the video asset library. */
export interface AssetsTable {
  id: string;
  account_id: string;
  kind: 'image' | 'video';
  url: string;
  task_id: string | null;
  /** For a derived video (subtitles erased), the task of the original. */
  source_task_id: string | null;
  created_at: number;
}

export interface WebhookOutboxTable {
  id: string;
  account_id: string;
  task_id: string;
  event_id: string;
  url: string;
  /** The URL's origin: attempts in flight are limited per account and receiver. */
  receiver: string;
  payload: string;
  state: 'pending' | 'delivered' | 'dropped';
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export interface FilesTable {
  id: string;
  account_id: string;
  filename: string;
  content_type: string | null;
  bytes: number;
  storage_path: string;
  created_at: number;
  /** Served and counted against the quota until then; the sweep deletes it after. */
  expires_at: number;
  /** What the file is for, as the upload named it (`batch`: a batch's input; `batch_output`); null when it named none. */
  purpose: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A batch of metered calls run in the background (batches/runner.ts); its lines are in `batch_lines`. */
export interface BatchesTable {
  id: string;
  account_id: string;
  /** The key that created it: its lines run as that key (its limits, its test or live mode). */
  key_id: string;
  livemode: number;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  /** in_progress, finalizing, completed, expired, cancelling, cancelled (failed and validating: refused at creation). */
  status: string;
  /** JSON object, or null. */
  metadata: string | null;
  callback_url: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  /** The instance finishing the batch (writing its files) and until when; another takes over after. */
  lease_owner: string | null;
  lease_until: number | null;
}

/** One request of a batch: pending → running → succeeded or failed (or cancelled, never run). */
export interface BatchLinesTable {
  batch_id: string;
  line_no: number;
  account_id: string;
  custom_id: string;
  url: string;
  /** The request body, as JSON text. */
  body: string;
  status: string;
  /** The instance that runs (or ran) it. */
  owner: string | null;
  started_at: number | null;
  finished_at: number | null;
  /** The gateway's id of the line's call. */
  request_id: string | null;
  status_code: number | null;
  /** The answer's body, as JSON text. */
  response: string | null;
  error_code: string | null;
  error_message: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
}

/** A one-time sign-in link to the account console: only the token's hash is kept. */
export interface ConsoleLoginLinksTable {
  id: string;
  account_id: string;
  token_hash: string; // sha256 hex of the token in the link
  created_at: number;
  expires_at: number;
  /** When it signed someone in; a link is good once. */
  used_at: number | null;
}

/** A signed-in console: the cookie carries a random secret, the row its hash. */
export interface ConsoleSessionsTable {
  id: string; // sha256 hex of the cookie's secret
  account_id: string;
  created_at: number;
  expires_at: number;
  /** When it was signed out. */
  ended_at: number | null;
  /** The login link it was made with, or else… */
  link_id: string | null;
  /** …the API key it was made with (revoking the key ends the session). */
  key_id: string | null;
}

export interface DB {
  accounts: AccountsTable;
  instances: InstancesTable;
  api_keys: ApiKeysTable;
  key_spend: KeySpendTable;
  holds: HoldsTable;
  ledger: LedgerTable;
  usage: UsageTable;
  /** Usage rows settled by SQLite's hot ledger, not yet moved into `usage` (store/usage-recent.ts). */
  usage_recent: UsageTable;
  /** A view: `usage` and `usage_recent` as one, read-only. */
  usage_all: UsageTable;
  idempotency: IdempotencyTable;
  tasks: TasksTable;
  webhook_outbox: WebhookOutboxTable;
  files: FilesTable;
  batches: BatchesTable;
  batch_lines: BatchLinesTable;
  assets: AssetsTable;
  console_login_links: ConsoleLoginLinksTable;
  console_sessions: ConsoleSessionsTable;
  price_plans: PricePlansTable;
  price_changes: PriceChangesTable;
  price_book: PriceBookTable;
  /** Each distinct price list a usage row was billed at, once (price-list-tables.ts). */
  price_lists: PriceListsTable;
  redemption_batches: RedemptionBatchesTable;
  redemption_codes: RedemptionCodesTable;
  redemption_failures: RedemptionFailuresTable;
  card_payments: CardPaymentsTable;
  stripe_events: StripeEventsTable;
}
