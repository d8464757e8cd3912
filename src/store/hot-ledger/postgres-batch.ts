// The PostgreSQL hot ledger's steps, many in one statement: all the holds asked for while the event
// loop polled are written by one HOLD_BATCH, all the settles by one SETTLE_BATCH, all the releases by
// one RELEASE_BATCH. Each is one statement of data-modifying CTEs, so it commits by itself and is
// all or nothing. The rows are those of the single-step statements in postgres.ts, row for row.
//
// Locks are taken in one order by every batch: the holds it ends, sorted by id, then their accounts,
// sorted by id. Each row is locked by a LATERAL subquery `… where id = x for no key update`, which
// PostgreSQL cannot flatten into a join: it runs as a nested loop over the sorted ids, one index
// lookup and one lock at a time, in that order (and never as a scan of the whole table). Single steps
// and the transaction steps also lock a hold before its account, so two of them never wait on each
// other in a circle; should PostgreSQL still report a deadlock, the caller replays the batch step by
// step. FOR NO KEY UPDATE is the lock an UPDATE takes: it leaves the foreign-key checks of other
// inserts (FOR KEY SHARE) free to pass.
//
// A batch answers what it can decide exactly; `undefined` marks a step it cannot, which the caller
// runs alone with the single-step statement.
import type { PostgresQueryable } from './postgres.js';
import type { HoldEntry, SettleEntry, SettleResult } from './types.js';

// `locked` reads each account's balance under its row lock. A hold is taken while the running sum of
// its account's holds, in queue order, stays within that balance. The running sum counts the holds it
// refuses too, so a small hold after a refused big one is refused here although it may fit: every
// refusal is therefore left to the single-step statement, which decides it against the balance of its turn.
const HOLD_BATCH = `
with step as (
  select *
  from unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])
    with ordinality as s(hold_id, account_id, amount, key_id, request_id, model, endpoint, instance_id, client_request_id, created_at, n)
), locked as materialized (
  select a.id, a.balance_micros
  from (select distinct account_id from step order by account_id) named
    cross join lateral (select id, balance_micros from accounts where id = named.account_id for no key update) a
), accepted as materialized (
  select *
  from (
    select step.*, locked.balance_micros, sum(step.amount) over (partition by step.account_id order by step.n) as running
    from step join locked on locked.id = step.account_id
  ) queued
  where running <= balance_micros
), moved as (
  update accounts
  set balance_micros = accounts.balance_micros - taken.amount, held_micros = accounts.held_micros + taken.amount
  from (select account_id, sum(amount)::bigint as amount from accepted group by account_id) taken
  where accounts.id = taken.account_id
), hold as (
  insert into holds (id, account_id, key_id, amount_micros, state, request_id, model, endpoint, created_at, instance_id, client_request_id)
  select hold_id, account_id, key_id, amount, 'open', request_id, model, endpoint, created_at, instance_id, client_request_id
  from accepted order by n
), entry as (
  insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, created_at)
  select account_id, 'hold', -amount, amount, hold_id, request_id, model, created_at
  from accepted order by n
)
select n from accepted`;

// `named_hold` locks each step's hold, in id order, and reads it as the lock left it: a step whose
// hold is not open (after waiting out a concurrent end of it) is not-open. The overdraft is read
// beside it, unlocked, as the single-step SETTLE reads it; a charge past the hold on an overdraft
// account is left open for the transaction step. In `settling`, the count of `locked` runs once,
// before any hold is written: it locks every account of the batch, in id order (and is never 0
// when a hold is open, since a hold's account exists). Every write hangs off `closed`'s RETURNING rows.
// Each CTE carries its steps' columns along instead of joining another CTE back by key: PostgreSQL
// joins CTEs by nested loops at the sizes it assumes, which is quadratic at the sizes batches reach.
// The accounts of the batch's open holds, locked in id order before any hold is ended (as HOLD_BATCH
// locks its accounts), so two batches naming the same accounts never wait on each other in a circle.
const LOCK_ACCOUNTS_OF_OPEN_HOLDS = `locked as materialized (
  select a.id
  from (select distinct account_id from named_hold where state = 'open' order by account_id) named
    cross join lateral (select id from accounts where id = named.account_id for no key update) a
)`;

const SETTLE_BATCH = `
with step as (
  select *
  from unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::int[], $9::text[], $10::int[], $11::text[])
    with ordinality as s(hold_id, charge, units, request_id, flags, usage_id, ended_at, upstream_ms, channel, attempts, price_id, n)
), named_hold as materialized (
  select s.*, h.account_id, h.amount_micros, h.state, h.cap_periods,
    (select overdraft_micros from accounts where id = h.account_id) as overdraft_micros
  from (select * from step order by hold_id) s
    cross join lateral (select account_id, amount_micros, state, cap_periods from holds where id = s.hold_id for no key update) h
), ${LOCK_ACCOUNTS_OF_OPEN_HOLDS}, settling as materialized (
  select *, least(charge, amount_micros) as charged
  from named_hold
  where state = 'open' and cap_periods is null and (charge <= amount_micros or overdraft_micros <= 0) and (select count(*) from locked) > 0
), closed as (
  update holds
  set state = 'settled', charged_micros = settling.charged, ended_at = settling.ended_at
  from settling
  where holds.id = settling.hold_id and holds.state = settling.state
  returning holds.id, holds.account_id, holds.key_id, holds.amount_micros, holds.model, holds.endpoint, holds.client_request_id,
    holds.charged_micros as charged, settling.charge - holds.charged_micros as unbilled, coalesce(settling.request_id, holds.request_id) as request_id,
    settling.units, settling.flags, settling.usage_id, settling.ended_at, settling.upstream_ms, settling.channel, settling.attempts, settling.price_id, settling.n
), moved as (
  update accounts
  set balance_micros = accounts.balance_micros + ended.returned, held_micros = accounts.held_micros - ended.held
  from (select account_id, sum(amount_micros - charged)::bigint as returned, sum(amount_micros)::bigint as held from closed group by account_id) ended
  where accounts.id = ended.account_id
), entry as (
  insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, created_at)
  select account_id, 'settle', amount_micros - charged, -amount_micros, id, request_id, model, ended_at
  from closed order by n
), used as (
  insert into usage (id, account_id, key_id, hold_id, request_id, model, endpoint, units, amount_micros, created_at, unbilled_micros, flags, client_request_id, upstream_ms, channel, attempts, price_id)
  select usage_id, account_id, key_id, id, request_id, model, endpoint, units, charged, ended_at, unbilled,
    case when unbilled > 0 then concat_ws(',', flags, 'capped') else flags end, client_request_id, upstream_ms, channel, attempts, price_id
  from closed order by n
)
select n, charged, unbilled from closed
union all
select n, null, null from named_hold where state = 'open' and (cap_periods is not null or not (charge <= amount_micros or overdraft_micros <= 0))`;

// As SETTLE_BATCH, without the overdraft rule.
const RELEASE_BATCH = `
with step as (
  select * from unnest($1::text[], $2::text[], $3::bigint[]) with ordinality as s(hold_id, note, ended_at, n)
), named_hold as materialized (
  select s.*, h.account_id, h.amount_micros, h.state, h.cap_periods
  from (select * from step order by hold_id) s
    cross join lateral (select account_id, amount_micros, state, cap_periods from holds where id = s.hold_id for no key update) h
), ${LOCK_ACCOUNTS_OF_OPEN_HOLDS}, releasing as materialized (
  select * from named_hold where state = 'open' and cap_periods is null and (select count(*) from locked) > 0
), closed as (
  update holds
  set state = 'released', charged_micros = null, ended_at = releasing.ended_at
  from releasing
  where holds.id = releasing.hold_id and holds.state = releasing.state
  returning holds.id, holds.account_id, holds.amount_micros, holds.request_id, holds.model, releasing.note, releasing.ended_at, releasing.n
), moved as (
  update accounts
  set balance_micros = accounts.balance_micros + ended.amount, held_micros = accounts.held_micros - ended.amount
  from (select account_id, sum(amount_micros)::bigint as amount from closed group by account_id) ended
  where accounts.id = ended.account_id
), entry as (
  insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, note, created_at)
  select account_id, 'release', amount_micros, -amount_micros, id, request_id, model, note, ended_at
  from closed order by n
)
select n from closed`;

export interface ReleaseEntry {
  holdId: string;
  note: string | null;
  now: number;
}

/** The positions (1-based, as WITH ORDINALITY counts) a batch statement returned. */
async function positions(pool: PostgresQueryable, statement: { name: string; text: string; values: unknown[] }): Promise<Set<number>> {
  const { rows } = await pool.query(statement);
  return new Set((rows as { n: number }[]).map((row) => row.n));
}

/** True for each hold taken; undefined for each refused (its account lacked the funds or does not exist), to be decided alone. */
export async function holdBatch(pool: PostgresQueryable, entries: HoldEntry[]): Promise<(true | undefined)[]> {
  const taken = await positions(pool, {
    name: 'tollroute_hold_batch',
    text: HOLD_BATCH,
    values: [
      entries.map((e) => e.holdId),
      entries.map((e) => e.accountId),
      entries.map((e) => e.amountMicros),
      entries.map((e) => e.keyId),
      entries.map((e) => e.requestId),
      entries.map((e) => e.model),
      entries.map((e) => e.endpoint),
      entries.map((e) => e.instanceId),
      entries.map((e) => e.clientRequestId),
      entries.map((e) => e.now),
    ],
  });
  return entries.map((_, i) => (taken.has(i + 1) ? true : undefined));
}

/** A row per settle that was applied (charged) or left for the transaction step (charged null); none for a hold not open. */
interface SettleRow {
  n: number;
  charged: number | null;
  unbilled: number | null;
}

export async function settleBatch(pool: PostgresQueryable, entries: SettleEntry[]): Promise<SettleResult[]> {
  requireDistinctHolds(entries);
  const { rows } = await pool.query({
    name: 'tollroute_settle_batch',
    text: SETTLE_BATCH,
    values: [
      entries.map((e) => e.holdId),
      entries.map((e) => e.chargeMicros),
      entries.map((e) => e.units),
      entries.map((e) => e.requestId),
      // Joined as settleHoldIn joins them; 'capped' is appended in SQL, where the cap is known.
      entries.map((e) => (e.flags.length > 0 ? e.flags.join(',') : null)),
      entries.map((e) => e.usageId),
      entries.map((e) => e.now),
      entries.map((e) => e.upstreamMs ?? null),
      entries.map((e) => e.channel ?? null),
      entries.map((e) => e.attempts ?? null),
      entries.map((e) => e.priceId ?? null),
    ],
  });
  const results: SettleResult[] = entries.map(() => ({ kind: 'not-open' }));
  for (const { n, charged, unbilled } of rows as SettleRow[]) {
    results[n - 1] =
      charged !== null && unbilled !== null ? { kind: 'applied', chargedMicros: charged, unbilledMicros: unbilled } : { kind: 'needs-transaction' };
  }
  return results;
}

export async function releaseBatch(pool: PostgresQueryable, entries: ReleaseEntry[]): Promise<boolean[]> {
  requireDistinctHolds(entries);
  const released = await positions(pool, {
    name: 'tollroute_release_batch',
    text: RELEASE_BATCH,
    values: [entries.map((e) => e.holdId), entries.map((e) => e.note), entries.map((e) => e.now)],
  });
  return entries.map((_, i) => released.has(i + 1));
}

/**
 * The caller runs a second step on a hold alone (coalesce.ts). The statements would still end a
 * hold once (every write hangs off the one row its UPDATE returns), but which step PostgreSQL
 * applies would be arbitrary: a batch naming a hold twice is refused before anything is sent.
 */
function requireDistinctHolds(entries: { holdId: string }[]): void {
  if (new Set(entries.map((e) => e.holdId)).size !== entries.length) throw new Error('a batch names one hold twice');
}
