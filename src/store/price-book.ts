// Queries on the price tables (store/price-tables.ts): plans, account plans and price changes. Every
// write raises price_book.version in its transaction, which each instance polls (billing/price-book.ts).
import { type Kysely, type Selectable, sql } from 'kysely';
import type { PriceChangesTable, PricePlansTable } from './price-tables.js';
import type { DB } from './schema.js';

export type PlanRow = Selectable<PricePlansTable>;
export type PriceChangeRow = Selectable<PriceChangesTable>;

export async function readPriceBookVersion(db: Kysely<DB>): Promise<number> {
  const row = await db.selectFrom('price_book').select('version').where('id', '=', 'book').executeTakeFirst();
  return Number(row?.version ?? 0);
}

const raiseVersion = (db: Kysely<DB>) => sql`update price_book set version = version + 1 where id = 'book'`.execute(db);

export interface PriceBookRows {
  version: number;
  plans: PlanRow[];
  changes: PriceChangeRow[];
  accountPlans: { id: string; plan: string | null }[];
}

/** Everything the book holds, read in one transaction so the version matches the rows. */
export async function readPriceBook(db: Kysely<DB>): Promise<PriceBookRows> {
  return db.transaction().execute(async (trx) => ({
    version: await readPriceBookVersion(trx),
    plans: await listPlans(trx),
    changes: await trx.selectFrom('price_changes').selectAll().orderBy('effective_at').orderBy('created_at').execute(),
    accountPlans: await trx.selectFrom('accounts').select(['id', 'plan']).where('plan', 'is not', null).execute(),
  }));
}

export async function upsertPlan(db: Kysely<DB>, row: PlanRow): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('price_plans')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ multiplier_ppm: row.multiplier_ppm, model_multipliers: row.model_multipliers, prices: row.prices, updated_at: row.updated_at }),
      )
      .execute();
    await raiseVersion(trx);
  });
}

/** False when no plan has that name; a plan some account is on is refused by the caller first. */
export async function deletePlan(db: Kysely<DB>, name: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const deleted = await trx.deleteFrom('price_plans').where('name', '=', name).executeTakeFirst();
    await raiseVersion(trx);
    return Number(deleted.numDeletedRows) > 0;
  });
}

export async function listPlans(db: Kysely<DB>): Promise<PlanRow[]> {
  return db.selectFrom('price_plans').selectAll().orderBy('name').execute();
}

export async function findPlan(db: Kysely<DB>, name: string): Promise<PlanRow | undefined> {
  return db.selectFrom('price_plans').selectAll().where('name', '=', name).executeTakeFirst();
}

/** How many accounts each plan has on it, in one read; a plan without any is absent. */
export async function countAccountsByPlan(db: Kysely<DB>): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('accounts')
    .select((eb) => ['plan', eb.fn.countAll<number>().as('n')])
    .where('plan', 'is not', null)
    .groupBy('plan')
    .execute();
  return new Map(rows.map((row) => [row.plan!, Number(row.n)]));
}

export async function countAccountsOnPlan(db: Kysely<DB>, name: string): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('plan', '=', name)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** False when there is no such account. */
export async function assignPlan(db: Kysely<DB>, accountId: string, plan: string | null): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const updated = await trx.updateTable('accounts').set({ plan }).where('id', '=', accountId).executeTakeFirst();
    await raiseVersion(trx);
    return Number(updated.numUpdatedRows) > 0;
  });
}

export async function insertPriceChange(db: Kysely<DB>, row: PriceChangeRow): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('price_changes').values(row).execute();
    await raiseVersion(trx);
  });
}

export async function listPriceChanges(db: Kysely<DB>, model?: string): Promise<PriceChangeRow[]> {
  return db
    .selectFrom('price_changes')
    .selectAll()
    .$if(model !== undefined, (q) => q.where('model', '=', model!))
    .orderBy('effective_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
}
