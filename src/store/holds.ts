// Queries on `holds`: funds set aside for one call until it is settled or released.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, HoldsTable } from './schema.js';

export type HoldRow = Selectable<HoldsTable>;

const COLUMNS = [
  'id', 'account_id', 'key_id', 'amount_micros', 'state', 'request_id', 'model', 'endpoint', 'task_id',
  'charged_micros', 'created_at', 'ended_at',
] as const;

export async function insertHold(db: Kysely<DB>, row: Insertable<HoldsTable>): Promise<void> {
  await db.insertInto('holds').values(row).execute();
}

export async function findHold(db: Kysely<DB>, id: string): Promise<HoldRow | undefined> {
  return db.selectFrom('holds').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

// The exactly-once gate: only the caller that moves the hold out of 'open' gets the row back,
// and only that caller moves money. A concurrent second caller waits on the row lock, then
// finds the state changed and gets undefined.
export async function closeHold(
  db: Kysely<DB>,
  { id, state, chargedMicros, now }: { id: string; state: 'settled' | 'released'; chargedMicros: number | null; now: number },
): Promise<HoldRow | undefined> {
  return db
    .updateTable('holds')
    .set({ state, charged_micros: chargedMicros, ended_at: now })
    .where('id', '=', id)
    .where('state', '=', 'open')
    .returning(COLUMNS)
    .executeTakeFirst();
}

// Holds left open by a crashed instance. Task holds are excluded: a task's hold lives as long
// as the task, and the task poller settles or releases it.
export async function listStaleHolds(db: Kysely<DB>, { createdBefore }: { createdBefore: number }): Promise<HoldRow[]> {
  return db
    .selectFrom('holds')
    .select(COLUMNS)
    .where('state', '=', 'open')
    .where('task_id', 'is', null)
    .where('created_at', '<', createdBefore)
    .orderBy('created_at')
    .execute();
}
