// Prices: integer micros, token prices per million, each line rounded up.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { clampedFlag, priceMicros, saneUnits } from '../../src/billing/prices.js';

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

test('a negative or non-numeric figure is replaced by the fallback count, asked for only then, and kept as reported', () => {
  let asked = 0;
  const counted = () => {
    asked += 1;
    return { input_token: 40, output_token: 7 };
  };
  const sane = saneUnits({ input_token: 'n/a' as unknown as number, output_token: -5, call: 1 }, { bounds: { output_token: 100 }, fallback: counted });
  assert.deepEqual(sane, { units: { input_token: 40, output_token: 7, call: 1 }, clamped: true, replaced: { input_token: 'n/a', output_token: -5 } });
  assert.equal(asked, 1);
  saneUnits({ input_token: 3, output_token: 150 }, { bounds: { output_token: 100 }, fallback: counted });
  assert.equal(asked, 1, 'a figure beyond its bound takes the bound, not the fallback');
});

test('sane figures are kept, rounded up, with nothing replaced', () => {
  assert.deepEqual(saneUnits({ input_token: 2.5, output_token: 0 }, { bounds: {}, fallback: {} }), {
    units: { input_token: 3, output_token: 0 },
    clamped: false,
    replaced: {},
  });
});

test('a replaced figure is a flag naming its unit and the figure, without the comma that separates flags', () => {
  assert.equal(clampedFlag('output_token', -5), 'clamped:output_token=-5');
  assert.equal(clampedFlag('input_token', Number.NaN), 'clamped:input_token=NaN');
  assert.equal(clampedFlag('input_token', '1,000'), 'clamped:input_token="1%2C000"');
  assert.equal(clampedFlag('input_token', null), 'clamped:input_token=null');
  assert.equal(clampedFlag('input_token', 'x'.repeat(100)), `clamped:input_token="${'x'.repeat(39)}…`);
});
