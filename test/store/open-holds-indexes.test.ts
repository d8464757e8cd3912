// The sweeps look up open holds through one partial index (WHERE state = 'open'); a query the
// planner cannot match to it would scan every hold ever made, on every sweep. One index, not one a
// sweep: every hold's insert and end change it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listOrphanedHolds } from '../../src/store/holds.js';
import { removeDeadInstances } from '../../src/store/instances.js';
import { openStore, type Store } from '../../src/store/open.js';
import { plansOf } from './query-plans.js';
import { indexNames } from './sqlite-schema.js';

let store: Store;
before(async () => {
  store = await openStore('sqlite::memory:');
});
after(() => store.close());

test('the sweep finds orphaned holds through the index of open holds, not a scan of every hold', async () => {
  const plans = await plansOf(store.db, (db) => listOrphanedHolds(db, { heartbeatBefore: 1, legacyCreatedBefore: 1, limit: 5 }));
  assert.ok(
    plans.some((p) => /holds USING (COVERING )?INDEX holds_open\b/.test(p)),
    plans.join('\n'),
  );
  assert.ok(!plans.some((p) => /^SCAN holds$/.test(p)), plans.join('\n'));
});

test('removing dead instances checks their open holds through the index of open holds', async () => {
  const plans = await plansOf(store.db, (db) => removeDeadInstances(db, { heartbeatBefore: 1 }));
  assert.ok(
    plans.some((p) => /holds USING (COVERING )?INDEX holds_open \(instance_id=\?\)/.test(p)),
    plans.join('\n'),
  );
});

test('open holds have one index of their own: a hold written and ended changes one index beside its table', async () => {
  assert.deepEqual(await indexNames(store.db, 'holds'), ['holds_open']);
});
