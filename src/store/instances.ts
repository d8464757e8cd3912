// Queries on `instances`: each gateway process heartbeats here, so any instance can tell which
// holds and idempotency records have lost their owner to a crash.
import { type Kysely, sql } from 'kysely';
import type { DB } from './schema.js';

/**
 * True for a row whose instance stopped heartbeating before `heartbeatBefore` (or whose instances
 * row is gone): its owner died. For the holds and idempotency queries alike.
 */
export function ownerStoppedBefore(table: 'holds' | 'idempotency', heartbeatBefore: number) {
  return sql<boolean>`not exists (select 1 from instances where instances.id = ${sql.ref(`${table}.instance_id`)} and instances.heartbeat_at >= ${heartbeatBefore})`;
}

export async function registerInstance(db: Kysely<DB>, { id, now }: { id: string; now: number }): Promise<void> {
  await db.insertInto('instances').values({ id, started_at: now, heartbeat_at: now }).execute();
}

/** False when the row is gone (another instance took us for dead and removed it): re-register then. */
export async function heartbeat(db: Kysely<DB>, { id, now }: { id: string; now: number }): Promise<boolean> {
  const result = await db.updateTable('instances').set({ heartbeat_at: now }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function removeInstance(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom('instances').where('id', '=', id).execute();
}

/** Rows of instances silent since `heartbeatBefore` whose holds have all ended. */
export async function removeDeadInstances(db: Kysely<DB>, { heartbeatBefore }: { heartbeatBefore: number }): Promise<number> {
  const result = await db
    .deleteFrom('instances')
    .where('heartbeat_at', '<', heartbeatBefore)
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('holds').select('holds.id').whereRef('holds.instance_id', '=', 'instances.id').where('holds.state', '=', 'open'))),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
