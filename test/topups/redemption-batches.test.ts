// The operator's redemption batches: made with their codes shown once, stored as hashes only,
// listed with how many were redeemed, and every field of a new batch checked with a 400 naming it.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { makeBatch } from './redemption-helpers.js';

describe('redemption batches (admin API)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  test('a new batch answers its count of distinct codes, each trc- and 26 base32 digits', async () => {
    const batch = await makeBatch(gw, { amount_micros: 2_500_000, count: 25, name: 'spring' });
    assert.match(batch.id, /^rb_/);
    assert.equal(batch.codes.length, 25);
    assert.equal(new Set(batch.codes).size, 25);
    for (const code of batch.codes) assert.match(code, /^trc-[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  test('the store keeps each code’s sha256 only, never the code', async () => {
    const batch = await makeBatch(gw, { amount_micros: 1_000_000, count: 3 });
    const rows = await gw.gateway.store.db.selectFrom('redemption_codes').selectAll().where('batch_id', '=', batch.id).execute();
    const sha256 = (code: string) => createHash('sha256').update(code).digest('hex');
    assert.deepEqual(rows.map((row) => row.code_hash).sort(), batch.codes.map(sha256).sort());
    const stored = JSON.stringify(await gw.gateway.store.db.selectFrom('redemption_batches').selectAll().execute()) + JSON.stringify(rows);
    for (const code of batch.codes) assert.ok(!stored.includes(code.slice(4)), 'no code appears in the store');
  });

  test('the list shows each batch with how many were redeemed, and never its codes', async () => {
    const batch = await makeBatch(gw, { amount_micros: 700_000, count: 4, expires_at: '2099-01-01T00:00:00Z', name: 'listed' });
    const { key } = await gw.account();
    assert.equal((await gw.call(key, 'POST', '/v1/account/redemptions', { code: batch.codes[1] })).status, 200);
    const listed = await gw.admin('GET', '/admin/redemption-batches');
    assert.equal(listed.status, 200);
    const entry = listed.body.data.find((b: { id: string }) => b.id === batch.id);
    assert.deepEqual(
      { ...entry, created_at: undefined },
      { id: batch.id, name: 'listed', amount_micros: 700_000, count: 4, redeemed: 1, expires_at: '2099-01-01T00:00:00.000Z', created_at: undefined },
    );
    assert.ok(!JSON.stringify(listed.body).includes('trc-'), 'the codes are shown once, at creation');
  });

  test('the list is newest first', async () => {
    const older = await makeBatch(gw, { amount_micros: 1, count: 1 });
    const newer = await makeBatch(gw, { amount_micros: 1, count: 1 });
    const ids = (await gw.admin('GET', '/admin/redemption-batches')).body.data.map((b: { id: string }) => b.id);
    assert.ok(ids.indexOf(newer.id) < ids.indexOf(older.id), ids.join(' '));
  });

  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ['an amount of zero', { amount_micros: 0, count: 1 }, /amount_micros/],
    ['a fractional amount', { amount_micros: 1.5, count: 1 }, /amount_micros/],
    ['no amount', { count: 1 }, /amount_micros/],
    ['a count of zero', { amount_micros: 1, count: 0 }, /count/],
    ['a count over 1000', { amount_micros: 1, count: 1001 }, /count/],
    ['an expiry that is not a date-time', { amount_micros: 1, count: 1, expires_at: 'tomorrow' }, /expires_at/],
    ['an expiry in the past', { amount_micros: 1, count: 1, expires_at: '2001-01-01T00:00:00Z' }, /expires_at: must be in the future/],
    ['an unknown field', { amount_micros: 1, count: 1, codes: ['trc-mine'] }, /codes/],
  ];
  for (const [what, body, names] of refusals) {
    test(`a batch with ${what} is refused with a 400 naming the field, and nothing is made`, async () => {
      const before = (await gw.admin('GET', '/admin/redemption-batches?limit=1000')).body.data.length;
      const made = await gw.admin('POST', '/admin/redemption-batches', body);
      assert.equal(made.status, 400, JSON.stringify(made.body));
      assert.equal(made.body.type, 'invalid_request_error');
      assert.match(made.body.error, names);
      assert.equal((await gw.admin('GET', '/admin/redemption-batches?limit=1000')).body.data.length, before);
    });
  }

  test('the batch routes want the admin token', async () => {
    const { key } = await gw.account();
    assert.equal((await gw.call(key, 'POST', '/admin/redemption-batches', { amount_micros: 1, count: 1 })).status, 401);
    assert.equal((await gw.call(key, 'GET', '/admin/redemption-batches')).status, 401);
  });
});
