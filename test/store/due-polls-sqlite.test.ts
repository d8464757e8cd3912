// The webhook deliverer and the task engine poll several times a second on every instance. A poll
// with nothing due reads one index entry and writes nothing: the claim, an update under the write
// lock built by the query builder, runs only when a row may be due.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { openStore, type Store } from '../../src/store/open.js';
import { mayHaveDueTasks } from '../../src/store/tasks.js';
import { enqueueWebhook, mayHaveDueWebhooks } from '../../src/store/webhook-outbox.js';
import { createTaskEngine } from '../../src/tasks/engine.js';
import { createWebhookDeliverer } from '../../src/webhooks/deliverer.js';
import { plansOf, statementsOf } from './query-plans.js';

const quiet = { info() {}, warn() {}, error() {} };
const T0 = 1_700_000_000_000;

let store: Store;
before(async () => {
  store = await openStore('sqlite::memory:');
});
after(() => store.close());

const writes = (sqls: string[]) => sqls.filter((text) => /\b(update|insert into|delete from)\b/i.test(text));

test('the poll for due webhooks reads the index of pending rows by due time, not the whole outbox', async () => {
  const plans = await plansOf(store.db, (db) => mayHaveDueWebhooks(db, T0));
  assert.ok(
    plans.some((p) => /webhook_outbox USING (COVERING )?INDEX webhook_outbox_state_next \(state=\? AND next_attempt_at<\?\)/.test(p)),
    plans.join('\n'),
  );
});

test('the poll for due tasks reads the index by status and poll time, not every task', async () => {
  const plans = await plansOf(store.db, (db) => mayHaveDueTasks(db, T0));
  assert.ok(
    plans.some((p) => /tasks USING (COVERING )?INDEX tasks_status_poll \(status=\? AND next_poll_at<\?\)/.test(p)),
    plans.join('\n'),
  );
});

test('a webhook poll with nothing due writes nothing; with a row due, it claims and sends it', async () => {
  let clock = T0;
  const pollWith = (db: Store['db']) =>
    createWebhookDeliverer({ store: { ...store, db }, retryDelaysMs: [], timeoutMs: 500, allowPrivate: true, log: quiet, now: () => clock }).deliverDue();
  const idle = await statementsOf(store.db, pollWith);
  assert.deepEqual(writes(idle.map((q) => q.sql)), [], idle.map((q) => q.sql).join('\n'));

  const { id: accountId } = await createAccount(store, { name: 'hooks', now: T0 });
  // Refused by the URL policy before any connection: the attempt is recorded as failed, and dropped.
  await enqueueWebhook(store.db, { accountId, taskId: 'task_1', eventId: 'evt_1', url: 'ftp://hooks.invalid/x', payload: '{}', now: T0 + 5 });
  clock = T0 + 4;
  const early = await statementsOf(store.db, pollWith);
  assert.deepEqual(writes(early.map((q) => q.sql)), [], 'due 1 ms later: still nothing written');
  clock = T0 + 5;
  const due = await statementsOf(store.db, pollWith);
  assert.ok(
    writes(due.map((q) => q.sql)).some((text) => /update "webhook_outbox" set "lease_until"/.test(text)),
    due.map((q) => q.sql).join('\n'),
  );
});

test('a task engine pass with nothing due writes nothing', async () => {
  const engine = (db: Store['db']) =>
    createTaskEngine({
      store: { ...store, db },
      catalogue: { resolve: () => assert.fail('no task to resolve') } as never,
      log: quiet,
      tickMs: 10,
      leaseMs: 150,
      taskTimeoutMs: 60_000,
      maxGenerationAttempts: 3,
      pollIntervalMs: { image: 10, video: 10, erase: 10, minutes: 10 },
      handlers: {} as never,
    }).runOnce();
  const pass = await statementsOf(store.db, engine);
  assert.deepEqual(
    pass.map((q) => q.sql),
    [pass[0]?.sql],
    'one statement',
  );
  assert.match(pass[0]?.sql ?? '', /^select 1 from tasks where/);
});
