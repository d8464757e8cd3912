// What must hold in the store after any number of crashes, once the survivors have finished:
// read straight from the tables, never through the gateway. Each broken rule is one line naming
// the row, so a failing seed says at once what went wrong where.
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { parseProgress } from '../../src/billing/recovery.js';
import type { Store } from '../../src/store/open.js';
import type { Delivery } from '../helpers/receiver.js';
import type { CallRecord } from './traffic.js';

export interface StoreFigures {
  accounts: number;
  holds: number;
  settled: number;
  released: number;
  /** Ended by the sweep: billed the progress a stream recorded, or released. */
  recoveredSettled: number;
  recoveredReleased: number;
  tasks: Record<string, number>;
  webhooks: Record<string, number>;
  /** Deliveries a receiver saw more than once (a crash between sending and recording). */
  duplicateDeliveries: number;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const flagsOf = (flags: string | null) => (flags ? flags.split(',') : []);

function group<T>(rows: T[], key: (row: T) => string | null): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    if (k !== null) map.set(k, [...(map.get(k) ?? []), row]);
  }
  return map;
}

/** Counts of open work: the loop waits for all three to reach zero before checking. */
export async function openWork(store: Store): Promise<{ holds: number; tasks: number; webhooks: number }> {
  const count = async (query: Promise<{ n: string | number | bigint }>) => Number((await query).n);
  return {
    holds: await count(
      store.db
        .selectFrom('holds')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('state', '=', 'open')
        .executeTakeFirstOrThrow(),
    ),
    tasks: await count(
      store.db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('status', 'not in', [...TERMINAL])
        .executeTakeFirstOrThrow(),
    ),
    webhooks: await count(
      store.db
        .selectFrom('webhook_outbox')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('state', '=', 'pending')
        .executeTakeFirstOrThrow(),
    ),
  };
}

export async function checkStore(store: Store, deliveries: Delivery[]): Promise<{ violations: string[]; figures: StoreFigures }> {
  const violations: string[] = [];
  const fail = (message: string) => violations.push(message);
  const db = store.db;
  const accounts = await db.selectFrom('accounts').select(['id']).execute();
  const holds = await db
    .selectFrom('holds')
    .select(['id', 'account_id', 'amount_micros', 'state', 'charged_micros', 'task_id', 'instance_id', 'progress'])
    .execute();
  const ledger = await db
    .selectFrom('ledger')
    .select(['hold_id', 'kind', 'balance_delta_micros', 'held_delta_micros', 'note'])
    .where('hold_id', 'is not', null)
    .execute();
  const usage = await db.selectFrom('usage_all').select(['id', 'hold_id', 'amount_micros', 'flags']).execute();
  const tasks = await db.selectFrom('tasks').select(['id', 'kind', 'status', 'hold_id', 'callback_url', 'error']).execute();
  const outbox = await db.selectFrom('webhook_outbox').select(['id', 'task_id', 'event_id', 'state']).execute();

  for (const { id } of accounts) {
    const check = await checkAccountBalance(store, id);
    if (!check.consistent)
      fail(`account ${id}: balance ${check.balanceMicros} + held ${check.heldMicros} != ledger ${check.ledgerBalanceMicros} + ${check.ledgerHeldMicros}`);
    if (check.heldMicros !== 0) fail(`account ${id}: ${check.heldMicros} micros still held`);
  }

  const ledgerOf = group(ledger, (row) => row.hold_id);
  const usageOf = group(usage, (row) => row.hold_id);
  const figures: StoreFigures = {
    accounts: accounts.length,
    holds: holds.length,
    settled: 0,
    released: 0,
    recoveredSettled: 0,
    recoveredReleased: 0,
    tasks: {},
    webhooks: {},
    duplicateDeliveries: 0,
  };
  for (const hold of holds) {
    const rows = ledgerOf.get(hold.id) ?? [];
    const where = `hold ${hold.id}`;
    if (hold.state === 'open') {
      fail(`${where}: still open`);
      continue;
    }
    const opened = rows.filter((r) => r.kind === 'hold');
    const ends = rows.filter((r) => r.kind === 'settle' || r.kind === 'release');
    if (opened.length !== 1 || opened[0]!.balance_delta_micros !== -hold.amount_micros || opened[0]!.held_delta_micros !== hold.amount_micros) {
      fail(`${where}: expected one hold row moving ${hold.amount_micros} to held, got ${JSON.stringify(opened)}`);
    }
    if (ends.length !== 1) {
      fail(`${where}: ended ${ends.length} times (${ends.map((r) => r.kind).join(', ')})`);
      continue;
    }
    const end = ends[0]!;
    const used = usageOf.get(hold.id) ?? [];
    const progress = parseProgress(hold.progress);
    if (hold.state === 'settled') {
      figures.settled += 1;
      const charged = hold.charged_micros ?? -1;
      if (end.kind !== 'settle') fail(`${where}: state settled but its ending row is a ${end.kind}`);
      if (end.balance_delta_micros !== hold.amount_micros - charged || end.held_delta_micros !== -hold.amount_micros) {
        fail(
          `${where}: settle row moves ${end.balance_delta_micros}/${end.held_delta_micros}, expected ${hold.amount_micros - charged}/${-hold.amount_micros}`,
        );
      }
      if (charged < 0 || charged > hold.amount_micros) fail(`${where}: charged ${charged} of a hold of ${hold.amount_micros}`);
      if (used.length !== 1) fail(`${where}: settled with ${used.length} usage rows`);
      else if (used[0]!.amount_micros !== charged) fail(`${where}: usage amount ${used[0]!.amount_micros} != charged ${charged}`);
      if (used.length === 1 && flagsOf(used[0]!.flags).includes('recovered')) {
        figures.recoveredSettled += 1;
        // Recovery bills exactly the progress the stream recorded (capped at the hold).
        const expected = Math.min(progress?.charge_micros ?? -1, hold.amount_micros);
        if (charged !== expected) fail(`${where}: recovered and charged ${charged}, but its recorded progress comes to ${hold.progress}`);
      }
    } else {
      figures.released += 1;
      if (end.kind !== 'release') fail(`${where}: state released but its ending row is a ${end.kind}`);
      if (end.balance_delta_micros !== hold.amount_micros || end.held_delta_micros !== -hold.amount_micros)
        fail(`${where}: release row moves ${end.balance_delta_micros}/${end.held_delta_micros}`);
      if (used.length > 0) fail(`${where}: released, yet ${used.length} usage rows`);
      if (end.note?.startsWith('recovered')) {
        figures.recoveredReleased += 1;
        // Output recorded as delivered is billed, never released.
        if (progress && progress.charge_micros > 0) fail(`${where}: released by recovery although it recorded progress ${hold.progress}`);
      }
    }
  }

  const holdIds = new Map(holds.map((h) => [h.id, h]));
  for (const row of usage) {
    if (!row.hold_id || !holdIds.has(row.hold_id)) fail(`usage ${row.id}: no hold (${row.hold_id})`);
    else if (!(ledgerOf.get(row.hold_id) ?? []).some((r) => r.kind === 'settle')) fail(`usage ${row.id}: its hold ${row.hold_id} has no settle row`);
  }

  const outboxOf = group(outbox, (row) => row.task_id);
  for (const task of tasks) {
    figures.tasks[task.status] = (figures.tasks[task.status] ?? 0) + 1;
    const where = `task ${task.id}`;
    if (!TERMINAL.has(task.status)) fail(`${where}: still ${task.status}`);
    const hold = task.hold_id ? holdIds.get(task.hold_id) : undefined;
    if (!hold) fail(`${where}: no hold`);
    else if (task.status === 'succeeded' && hold.state !== 'settled') fail(`${where}: succeeded, hold ${hold.state}`);
    // A failed erase keeps its consumption record: its hold ends settled at 0, never charged.
    else if (task.status !== 'succeeded' && TERMINAL.has(task.status) && hold.state !== 'released' && !(task.kind === 'erase' && hold.charged_micros === 0))
      fail(`${where}: ${task.status}, hold ${hold.state}`);
    // A task the upstream refused at creation was answered to its caller at once; every other end calls back once.
    const refusedAtCreation = task.error !== null && JSON.parse(task.error).code === 'upstream_refused';
    const events = outboxOf.get(task.id) ?? [];
    if (task.callback_url && TERMINAL.has(task.status) && !refusedAtCreation && events.length !== 1) fail(`${where}: ${events.length} webhook events`);
  }

  const received = group(
    deliveries.filter((d) => d.verified),
    (d) => String(d.headers['x-service-event-id']),
  );
  for (const row of outbox) {
    figures.webhooks[row.state] = (figures.webhooks[row.state] ?? 0) + 1;
    if (row.state === 'pending') fail(`webhook ${row.id} (task ${row.task_id}): still pending`);
    const copies = received.get(row.event_id)?.length ?? 0;
    if (row.state === 'delivered' && copies === 0)
      fail(`webhook ${row.id} (task ${row.task_id}): delivered, but no signed delivery of ${row.event_id} arrived`);
    if (copies > 1) figures.duplicateDeliveries += copies - 1;
  }
  if (deliveries.some((d) => !d.verified)) fail(`${deliveries.filter((d) => !d.verified).length} webhook deliveries failed signature verification`);
  return { violations, figures };
}

export interface CallFigures {
  /** Complete answers whose hold the gateway settled itself, at the documented amount. */
  billedAsDocumented: number;
  /**
   * Complete stream answers whose settle the kill cut off after the end marker went out: the
   * sweep ended them from the recorded progress (settled below the documented amount, or
   * released when no progress was recorded). Allowed by DESIGN §3's crash rule; counted.
   */
  endedByRecoveryAfterCompleting: { count: number; documentedMicros: number; chargedMicros: number; requestIds: string[] };
  idempotencyKeys: number;
}

/** The calls as their callers saw them, against their holds: a whole answer costs what it says. */
export async function checkCalls(store: Store, calls: CallRecord[]): Promise<{ violations: string[]; figures: CallFigures }> {
  const violations: string[] = [];
  const fail = (message: string) => violations.push(message);
  // The caller's x-request-id is kept on its hold as client_request_id.
  const holds = await store.db.selectFrom('holds').select(['id', 'client_request_id', 'state', 'charged_micros', 'amount_micros']).execute();
  const usage = await store.db.selectFrom('usage_all').select(['hold_id', 'flags']).execute();
  const ledger = await store.db.selectFrom('ledger').select(['hold_id', 'note']).where('kind', '=', 'release').execute();
  const tasks = new Map((await store.db.selectFrom('tasks').select(['id', 'status', 'hold_id']).execute()).map((t) => [t.id, t]));
  const holdsOf = group(holds, (h) => h.client_request_id);
  const holdById = new Map(holds.map((h) => [h.id, h]));
  const recovered = new Set([
    ...usage.filter((u) => flagsOf(u.flags).includes('recovered')).map((u) => u.hold_id),
    ...ledger.filter((r) => r.note?.startsWith('recovered')).map((r) => r.hold_id),
  ]);
  const figures: CallFigures = {
    billedAsDocumented: 0,
    endedByRecoveryAfterCompleting: { count: 0, documentedMicros: 0, chargedMicros: 0, requestIds: [] },
    idempotencyKeys: 0,
  };

  for (const call of calls) {
    const where = `${call.kind} ${call.requestId}`;
    const own = holdsOf.get(call.requestId) ?? [];
    if (own.length > 1) fail(`${where}: ${own.length} holds for one request`);
    // An error answer costs nothing (DESIGN §5).
    const charged = own.find((h) => h.state === 'settled' && (h.charged_micros ?? 0) > 0);
    if (call.outcome === 'refused' && charged) fail(`${where}: answered ${call.status}, yet charged ${charged.charged_micros}`);
    if (call.outcome !== 'complete' || call.documentedMicros === undefined || call.replayed) continue;
    // A task's hold is billed when the task ends, on the task's outcome.
    const task = call.taskId ? tasks.get(call.taskId) : undefined;
    const hold = task ? holdById.get(task.hold_id ?? '') : own[0];
    if (call.taskId && !task) fail(`${where}: answered task ${call.taskId}, which the store does not have`);
    if (!hold) {
      fail(`${where}: answered whole, but has no hold`);
      continue;
    }
    if (task && task.status !== 'succeeded') continue; // failed or cancelled: released, checked with the store
    if (!task && call.kind.endsWith('-stream') && recovered.has(hold.id)) {
      const figure = figures.endedByRecoveryAfterCompleting;
      figure.count += 1;
      figure.documentedMicros += call.documentedMicros;
      figure.chargedMicros += hold.charged_micros ?? 0;
      figure.requestIds.push(call.requestId);
      continue;
    }
    if (hold.state !== 'settled' || hold.charged_micros !== call.documentedMicros) {
      fail(
        `${where}: answered whole for ${call.documentedMicros} micros, but its hold ${hold.id} is ${hold.state} at ${hold.charged_micros}${recovered.has(hold.id) ? ' (by recovery)' : ''}`,
      );
    } else figures.billedAsDocumented += 1;
  }

  // One Idempotency-Key, however many attempts a crash forced: charged at most once.
  const byKey = group(
    calls.filter((c) => c.idempotencyKey),
    (c) => c.idempotencyKey!,
  );
  figures.idempotencyKeys = byKey.size;
  for (const [key, attempts] of byKey) {
    const charged = attempts.flatMap((a) => holdsOf.get(a.requestId) ?? []).filter((h) => h.state === 'settled' && (h.charged_micros ?? 0) > 0);
    if (charged.length > 1)
      fail(`Idempotency-Key ${key}: charged ${charged.length} times (${charged.map((h) => `${h.client_request_id}: ${h.charged_micros}`).join(', ')})`);
  }
  return { violations, figures };
}
