// The SQLite query plans of what a piece of store code runs: the statements are captured as they
// are compiled, then explained, so a test reads the plan of the real query, not of a copy of it.
import { CompiledQuery, type Kysely, type KyselyPlugin } from 'kysely';
import type { DB } from '../../src/store/schema.js';

/** Every statement `run` makes on `db`, as compiled. */
export async function statementsOf(db: Kysely<DB>, run: (db: Kysely<DB>) => Promise<unknown>): Promise<CompiledQuery[]> {
  const compiled: CompiledQuery[] = [];
  const capture: KyselyPlugin = {
    transformQuery: (args) => {
      compiled.push(db.getExecutor().compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  await run(db.withPlugin(capture));
  return compiled;
}

/** The plan of every statement `run` makes on `db`, one line per step. */
export async function plansOf(db: Kysely<DB>, run: (db: Kysely<DB>) => Promise<unknown>): Promise<string[]> {
  const compiled = await statementsOf(db, run);
  const plans: string[] = [];
  for (const query of compiled) {
    const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
    plans.push(...rows.map((row) => row.detail));
  }
  return plans;
}
