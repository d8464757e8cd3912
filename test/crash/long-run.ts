// `npm run test:kill-loop`: the long kill loop, on SQLite and on PostgreSQL, one after the other.
//   TOLLROUTE_KILLS         kills per store (default 200)
//   TOLLROUTE_KILL_SEED     the seed (default: a new one, printed, so a failure can be replayed)
//   TOLLROUTE_KILL_STORES   sqlite,postgres (default both; PostgreSQL from TOLLROUTE_TEST_POSTGRES_URL)
// Exits 1 when any invariant broke; the report names each broken row and the run's data directory.
import { dropTestSchemas, postgresUnreachableReason, testPostgresUrl, withTestSchema } from '../helpers/postgres.js';
import { describeReport, runKillLoop } from './kill-loop.js';
import { seedFrom } from './prng.js';

// Exit through process.exit, so the gateway process of the run in hand is killed with it.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

const kills = Number(process.env.TOLLROUTE_KILLS ?? 200);
if (!Number.isSafeInteger(kills) || kills < 1) throw new Error(`TOLLROUTE_KILLS: expected a positive integer, got ${process.env.TOLLROUTE_KILLS}`);
const seed = seedFrom(process.env.TOLLROUTE_KILL_SEED, (Date.now() ^ (process.pid << 16)) >>> 0);
const stores = (process.env.TOLLROUTE_KILL_STORES ?? 'sqlite,postgres')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
console.log(`kill loop: seed ${seed} (replay with TOLLROUTE_KILL_SEED=${seed}), ${kills} kills on each of ${stores.join(', ')}`);

let failed = false;
for (const name of stores) {
  let store: string;
  let cleanup = async () => {};
  if (name === 'sqlite') store = 'sqlite:';
  else if (name === 'postgres') {
    const base = testPostgresUrl();
    const unreachable = await postgresUnreachableReason(base);
    if (unreachable) {
      console.error(`postgres: ${unreachable}`);
      failed = true;
      continue;
    }
    const { url, schema } = withTestSchema(base);
    store = url;
    console.log(`postgres schema ${schema}`);
    cleanup = () => dropTestSchemas(base, [schema]);
  } else throw new Error(`TOLLROUTE_KILL_STORES: unknown store ${name} (sqlite, postgres)`);

  const report = await runKillLoop({ store, seed, kills, log: (line) => console.log(line) });
  console.log(describeReport(report));
  // A failed run keeps its schema and data directory for the post-mortem.
  if (report.violations.length > 0) failed = true;
  else await cleanup();
}
process.exit(failed ? 1 : 0);
