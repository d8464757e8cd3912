// The sweeps look up open holds through partial indexes (WHERE state = 'open'); a query the
// planner cannot match to them would scan every hold ever made, on every sweep.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listOrphanedHolds } from '../../src/store/holds.js';
import { removeDeadInstances } from '../../src/store/instances.js';
import { openStore, type Store } from '../../src/store/open.js';
import { plansOf } from './query-plans.js';

let store: Store;
before(async () => {
  store = await openStore('sqlite::memory:');
});
after(() => store.close());

test('the sweep finds orphaned holds through the index of open holds, not a scan of every hold', async () => {
  const plans = await plansOf(store.db, (db) => listOrphanedHolds(db, { heartbeatBefore: 1, legacyCreatedBefore: 1, limit: 5 }));
  assert.ok(
    plans.some((p) => p.includes('USING INDEX holds_open_created')),
    plans.join('\n'),
  );
  assert.ok(!plans.some((p) => /^SCAN holds$/.test(p)), plans.join('\n'));
});

test('removing dead instances checks their open holds through the index of open holds', async () => {
  const plans = await plansOf(store.db, (db) => removeDeadInstances(db, { heartbeatBefore: 1 }));
  assert.ok(
    plans.some((p) => /holds USING (COVERING )?INDEX holds_open_instance/.test(p)),
    plans.join('\n'),
  );
});
