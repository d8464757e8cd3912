// The hot ledger on PostgreSQL. Each step's single-step statement here is one statement of
// data-modifying CTEs, so it costs one round trip and commits by itself, and the account row is
// locked only for that statement instead of across a BEGIN … COMMIT of several round trips. Rows and
// values are those of billing/ledger.ts's holdFundsIn, settleHoldIn and releaseHoldIn.
//
// Steps asked for while the event loop polls are coalesced (coalesce.ts): one batch statement per
// kind (postgres-batch.ts) writes them all, so a commit, and on a busy account the wait for its row
// lock, is paid once per batch instead of once per step. The single-step statements write what a
// batch cannot decide exactly, and replay a batch that failed.
//
// Each is a named prepared statement: a connection parses and plans it once, where an unnamed one
// cost more server CPU than running it (2.2x the pairs per second in the ledger bench).
//
// Every CTE is written with explicit casts: a parameter in a SELECT list has no column to take its
// type from, and arithmetic on parameters would otherwise be typed by whichever use PostgreSQL sees first.
import { type CoalesceLimits, coalesce } from './coalesce.js';
import { holdBatch, type ReleaseEntry, releaseBatch, settleBatch } from './postgres-batch.js';
import type { HoldEntry, HotLedger, HotLedgerLog, SettleEntry, SettleResult } from './types.js';

/** What the steps need of a pg.Pool (or of anything sending a parameterized query the same way). */
export interface PostgresQueryable {
  query(statement: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

// The update only matches when the balance covers the amount; the hold and its ledger row are
// inserted from its RETURNING rows, so a refused hold writes nothing. Columns left out are null.
const HOLD = `
with moved as (
  update accounts
  set balance_micros = balance_micros - $3::bigint, held_micros = held_micros + $3::bigint
  where id = $2::text and balance_micros >= $3::bigint
  returning id
), hold as (
  insert into holds (id, account_id, key_id, amount_micros, state, request_id, model, endpoint, created_at, instance_id, client_request_id)
  select $1::text, moved.id, $4::text, $3::bigint, 'open', $5::text, $6::text, $7::text, $10::bigint, $8::text, $9::text
  from moved
), entry as (
  insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, created_at)
  select moved.id, 'hold', -$3::bigint, $3::bigint, $1::text, $5::text, $6::text, $10::bigint
  from moved
)
select 1 from moved`;

// `open_hold` locks the hold and, after waiting out a concurrent settle or release, sees the row as
// that one left it (read committed re-checks a locked row): it tells "not open" apart from "needs
// the transaction step" exactly. `closed` is the exactly-once gate; every write below hangs off its
// RETURNING rows, so a hold that is not closed here moves no money. Without an overdraft the charge
// is least(charge, held) whatever the balance, so the account needs no read before its update;
// a charge past the hold on an overdraft account is left to the transaction step (capCharge).
const SETTLE = `
with open_hold as (
  select h.id, h.amount_micros, a.overdraft_micros
  from holds h join accounts a on a.id = h.account_id
  where h.id = $1::text and h.state = 'open'
  for update of h
), closed as (
  update holds
  set state = 'settled', charged_micros = least($2::bigint, holds.amount_micros), ended_at = $7::bigint
  from open_hold
  where holds.id = open_hold.id and holds.state = 'open' and holds.cap_periods is null
    and ($2::bigint <= holds.amount_micros or open_hold.overdraft_micros <= 0)
  returning holds.id, holds.account_id, holds.key_id, holds.amount_micros, holds.request_id, holds.model, holds.endpoint,
    holds.client_request_id, holds.charged_micros as charged, $2::bigint - holds.charged_micros as unbilled
), moved as (
  update accounts
  set balance_micros = accounts.balance_micros + (closed.amount_micros - closed.charged), held_micros = accounts.held_micros - closed.amount_micros
  from closed
  where accounts.id = closed.account_id
), entry as (
  insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, created_at)
  select account_id, 'settle', amount_micros - charged, -amount_micros, id, coalesce($4::text, request_id), model, $7::bigint
  from closed
), used as (
  insert into usage (id, account_id, key_id, hold_id, request_id, model, endpoint, units, amount_micros, created_at, unbilled_micros, flags, client_request_id, upstream_ms, channel, attempts, price_id)
  select $6::text, account_id, key_id, id, coalesce($4::text, request_id), model, endpoint, $3::text, charged, $7::bigint, unbilled,
    case when unbilled > 0 then concat_ws(',', $5::text, 'capped') else $5::text end, client_request_id, $8::int, $9::text, $10::int, $11::text
  from closed
)
select
  (select count(*) from open_hold) as open,
  (select charged from closed) as charged,
  (select unbilled from closed) as unbilled`;

const RELEASE = `
with closed as (
  update holds
  set state = 'released', charged_micros = null, ended_at = $3::bigint
  where id = $1::text and state = 'open' and cap_periods is null
  returning id, account_id, amount_micros, request_id, model
), moved as (
  update accounts
  set balance_micros = accounts.balance_micros + closed.amount_micros, held_micros = accounts.held_micros - closed.amount_micros
  from closed
  where accounts.id = closed.account_id
), entry as (
  insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, note, created_at)
  select account_id, 'release', amount_micros, -amount_micros, id, request_id, model, $2::text, $3::bigint
  from closed
)
select 1 from closed`;

interface SettleRow {
  open: number;
  charged: number | null;
  unbilled: number | null;
}

/**
 * Amounts are not checked here, as in store/accounts.ts: the caller validates them (billing's
 * requireMicros) before any step runs. bigint results arrive as numbers through the pool's int8 parser.
 */
export function postgresHotLedger(pool: PostgresQueryable, limits: CoalesceLimits = DEFAULT_LIMITS, log?: HotLedgerLog): HotLedger {
  const single = singleSteps(pool);
  const byHold = (entry: { holdId: string }) => entry.holdId;
  const failed = (kind: string) => (error: unknown, steps: number) =>
    log?.warn({ err: error, kind, steps }, 'a batch of ledger steps failed; writing its steps one by one');
  return {
    hold: coalesce<HoldEntry, boolean>({ writeBatch: (entries) => holdBatch(pool, entries), writeOne: single.hold, target: byHold }, limits, failed('hold')),
    settle: coalesce<SettleEntry, SettleResult>(
      { writeBatch: (entries) => settleBatch(pool, entries), writeOne: single.settle, target: byHold },
      limits,
      failed('settle'),
    ),
    release: coalesce<ReleaseEntry, boolean>(
      { writeBatch: (entries) => releaseBatch(pool, entries), writeOne: single.release, target: byHold },
      limits,
      failed('release'),
    ),
  };
}

// Two statements of a kind at once keep two server cores busy under load (holds and settles then
// overlap too); a second one starts only with 32 steps or more, so a light load sends one statement
// at a time rather than many small ones, each paying its own commit. 256 steps bound a statement's
// arrays. In the ledger bench (64 workers, 1 000 accounts, 2 cores), one statement of a kind at a time
// made 4 500-4 750 pairs/s on spread accounts, two made 5 200-5 650 (hot account: 5 550-5 900, 5 950-6 050).
const DEFAULT_LIMITS: CoalesceLimits = { maxBatch: 256, maxInFlight: 2, minShare: 32 };

/** Each step in a statement of its own. */
function singleSteps(pool: PostgresQueryable): HotLedger {
  return {
    async hold(entry: HoldEntry): Promise<boolean> {
      const { rowCount } = await pool.query({
        name: 'tollroute_hold',
        text: HOLD,
        values: [
          entry.holdId,
          entry.accountId,
          entry.amountMicros,
          entry.keyId,
          entry.requestId,
          entry.model,
          entry.endpoint,
          entry.instanceId,
          entry.clientRequestId,
          entry.now,
        ],
      });
      return rowCount === 1;
    },

    async settle(entry: SettleEntry): Promise<SettleResult> {
      // Joined as settleHoldIn joins them; 'capped' is appended in SQL, where the cap is known.
      const flags = entry.flags.length > 0 ? entry.flags.join(',') : null;
      const { rows } = await pool.query({
        name: 'tollroute_settle',
        text: SETTLE,
        values: [
          entry.holdId,
          entry.chargeMicros,
          entry.units,
          entry.requestId,
          flags,
          entry.usageId,
          entry.now,
          entry.upstreamMs ?? null,
          entry.channel ?? null,
          entry.attempts ?? null,
          entry.priceId ?? null,
        ],
      });
      const row = rows[0] as SettleRow;
      if (row.charged !== null && row.unbilled !== null) return { kind: 'applied', chargedMicros: row.charged, unbilledMicros: row.unbilled };
      return row.open > 0 ? { kind: 'needs-transaction' } : { kind: 'not-open' };
    },

    async release(entry: ReleaseEntry): Promise<boolean> {
      const { rowCount } = await pool.query({ name: 'tollroute_release', text: RELEASE, values: [entry.holdId, entry.note, entry.now] });
      return rowCount === 1;
    },
  };
}
