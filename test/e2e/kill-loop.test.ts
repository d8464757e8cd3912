// The kill loop, short: a gateway process under streams, plain calls, idempotent
// retries, tasks and webhooks is killed with SIGKILL at seeded random moments and started again;
// afterwards every hold ended once with the documented amount, balance + held == sum(ledger),
// every task is terminal and every webhook delivered or dropped. The long run (200+ kills per
// store) is `npm run test:kill-loop`; a failing seed replays with TOLLROUTE_KILL_SEED.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { describeReport, runKillLoop } from '../crash/kill-loop.js';
import { seedFrom } from '../crash/prng.js';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';

const SEED = seedFrom(process.env.TOLLROUTE_KILL_SEED, 20_260_108);
const KILLS = 6;
const postgres = await requirePostgresOrSkip('kill loop on PostgreSQL');

// The two stores at once: each run has its own sandbox, receiver, port and data directory.
describe('kill loop', { concurrency: true }, () => {
  const schemas: string[] = [];
  after(() => (postgres ? dropTestSchemas(postgres, schemas) : undefined));

  test(`SQLite: ${KILLS} kills at random moments under mixed traffic leave every hold, task and webhook ended as documented`, async () => {
    const report = await runKillLoop({ store: 'sqlite:', seed: SEED, kills: KILLS, killDelayMs: [100, 1_200] });
    console.log(describeReport(report));
    assert.deepEqual(report.violations, []);
    assert.ok(report.stored.holds > 0 && report.stored.settled > 0, 'the traffic reached the store');
  });

  test(`PostgreSQL: ${KILLS} kills at random moments under mixed traffic leave every hold, task and webhook ended as documented`, {
    skip: !postgres,
  }, async () => {
    const { url, schema } = withTestSchema(postgres!);
    schemas.push(schema);
    const report = await runKillLoop({ store: url, seed: SEED, kills: KILLS, killDelayMs: [100, 1_200] });
    console.log(describeReport(report));
    assert.deepEqual(report.violations, []);
    assert.ok(report.stored.holds > 0 && report.stored.settled > 0, 'the traffic reached the store');
  });
});
