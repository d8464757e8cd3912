// The price book's arithmetic, and its reach across instances sharing one store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { multiplied, multiplierText, parseMultiplier } from '../../src/billing/price-book.js';
import { priceMicros } from '../../src/billing/prices.js';
import { GatewayError } from '../../src/errors.js';
import { eventually, startTestGateway } from '../helpers/gateway.js';

test('a multiplier is read exactly, in parts per million, and written back as given', () => {
  assert.deepEqual(
    [parseMultiplier('0.8', 'm'), parseMultiplier(1.25, 'm'), parseMultiplier('0.000001', 'm'), parseMultiplier('1000', 'm')],
    [800_000, 1_250_000, 1, 1_000_000_000],
  );
  assert.deepEqual([multiplierText(800_000), multiplierText(1_250_000), multiplierText(2_000_000)], ['0.8', '1.25', '2']);
});

test('a multiplier that is not a plain decimal, is 0, or is past 1000 is refused naming its field', () => {
  for (const bad of ['1e3', '-1', '0', '0.0000001', '1000.5', 'abc', null]) {
    assert.throws(
      () => parseMultiplier(bad, 'models.x'),
      (error: unknown) => error instanceof GatewayError && error.status === 400 && /^models\.x:/.test(error.message),
      String(bad),
    );
  }
});

test('a multiplied price is each unit price times the multiplier, rounded half up to a whole micro', () => {
  assert.deepEqual(multiplied({ input_token: 3, output_token: 5, tiers: [{ above_input_tokens: 10, input_token: 7 }] }, 500_000), {
    input_token: 2,
    output_token: 3,
    tiers: [{ above_input_tokens: 10, input_token: 4 }],
  });
  fc.assert(
    fc.property(fc.nat(Math.floor(Number.MAX_SAFE_INTEGER / 1_000_000_000)), fc.integer({ min: 1, max: 1_000_000_000 }), (perUnit, ppm) => {
      const result = multiplied({ call: perUnit }, ppm).call!;
      const exact = (BigInt(perUnit) * BigInt(ppm) * 2n + 1_000_000n) / 2_000_000n;
      return Number.isSafeInteger(result) && BigInt(result) === exact;
    }),
  );
});

test('a multiplier of one leaves the price list as it is', () => {
  const price = { input_token: 9 };
  assert.equal(multiplied(price, 1_000_000), price);
});

test('a plan assigned on one instance reaches another on the same store within prices.refresh_ms', async () => {
  const price = { input_token: 2_000_000, output_token: 8_000_000 };
  const overrides = {
    prices: { refresh_ms: 100 },
    models: { 'book-chat': { type: 'chat' as const, channel: 'sandbox-openai', upstream_model: 'sandbox-chat', price } },
  };
  const first = await startTestGateway(overrides);
  const second = await startTestGateway({ ...overrides, store: first.storeUrl });
  try {
    await first.admin('POST', '/admin/plans', { name: 'tenth', multiplier: '0.1' });
    const account = await first.account();
    await first.admin('PUT', `/admin/accounts/${account.accountId}/plan`, { plan: 'tenth' });
    const pricing = await eventually(async () => {
      const seen = (await second.call(account.key, 'GET', '/v1/models/book-chat')).body.pricing;
      return seen?.prompt === '0.0000002' && seen;
    }, 2_000);
    assert.equal(pricing.completion, '0.0000008');
    const answer = await second.call(account.key, 'POST', '/v1/chat/completions', { model: 'book-chat', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(answer.status, 200);
    const row = await eventually(async () => (await second.call(account.key, 'GET', '/v1/account/usage?limit=1')).body.data?.[0]);
    assert.equal(row.amount_micros, priceMicros(row.units, { input_token: 200_000, output_token: 800_000 }));
  } finally {
    await second.close();
    await first.close();
  }
});
