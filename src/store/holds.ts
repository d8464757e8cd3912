// Queries on `holds`: funds set aside for one call until it is settled or released.
import type { Insertable, Kysely, Selectable } from 'kysely';
import { ownerStoppedBefore } from './instances.js';
import type { DB, HoldsTable } from './schema.js';

export type HoldRow = Selectable<HoldsTable>;

const COLUMNS = [
  'id',
  'account_id',
  'key_id',
  'amount_micros',
  'state',
  'request_id',
  'model',
  'endpoint',
  'task_id',
  'charged_micros',
  'created_at',
  'ended_at',
  'instance_id',
  'progress',
  'client_request_id',
  'cap_periods',
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

/** The amount a settle really took, when it differs from the charge closeHold first wrote. */
export async function setCharged(db: Kysely<DB>, id: string, chargedMicros: number): Promise<void> {
  await db.updateTable('holds').set({ charged_micros: chargedMicros }).where('id', '=', id).execute();
}

/** What open streams have delivered so far, in one statement per hold, all in the caller's transaction. */
export async function recordProgress(db: Kysely<DB>, entries: { id: string; progress: string }[]): Promise<void> {
  for (const { id, progress } of entries) {
    await db.updateTable('holds').set({ progress }).where('id', '=', id).where('state', '=', 'open').execute();
  }
}

/**
 * Open holds of plain calls whose owner is gone: its instance stopped heartbeating (or its row is
 * gone), or, for rows written before instances existed, the hold outlived the longest call. Task
 * holds are excluded: a task's hold lives as long as the task, and the task engine ends it.
 */
export async function listOrphanedHolds(
  db: Kysely<DB>,
  { heartbeatBefore, legacyCreatedBefore, limit }: { heartbeatBefore: number; legacyCreatedBefore: number; limit: number },
): Promise<HoldRow[]> {
  return db
    .selectFrom('holds')
    .select(COLUMNS)
    .where('state', '=', 'open')
    .where('task_id', 'is', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('instance_id', 'is', null), eb('created_at', '<', legacyCreatedBefore)]),
        eb.and([eb('instance_id', 'is not', null), ownerStoppedBefore('holds', heartbeatBefore)]),
      ]),
    )
    .orderBy('created_at')
    .limit(limit)
    .execute();
}
