// Prices: integer micros, token prices per million, each line rounded up.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { priceMicros } from '../../src/billing/prices.js';

test('token prices are per million tokens', () => {
  assert.equal(priceMicros({ input_token: 12, output_token: 30 }, { input_token: 2_000_000, output_token: 8_000_000 }), 12 * 2 + 30 * 8);
});

test('a fraction of a micro is rounded up, per unit line', () => {
  assert.equal(priceMicros({ input_token: 1, output_token: 1 }, { input_token: 150_000, output_token: 600_000 }), 2);
});

test('per-unit prices multiply, and units without a price cost nothing', () => {
  assert.equal(priceMicros({ call: 3, character: 10, second: 5 }, { call: 5_000, character: 100 }), 3 * 5_000 + 10 * 100);
});

test('a charge is always a non-negative integer', () => {
  fc.assert(
    fc.property(fc.nat(10_000_000), fc.nat(100_000_000), fc.nat(1_000), fc.nat(1_000_000), (tokens, perMillion, calls, perCall) => {
      const charge = priceMicros({ input_token: tokens, call: calls }, { input_token: perMillion, call: perCall });
      return Number.isSafeInteger(charge) && charge >= 0 && charge >= calls * perCall;
    }),
  );
});
