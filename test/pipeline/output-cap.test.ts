// The cap a balance holds: the most output tokens whose hold, priced as every hold is, fits the balance.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { priceMicros } from '../../src/billing/prices.js';
import { affordableOutputTokens } from '../../src/pipeline/output-cap.js';

const price = { input_token: 2_000_000, output_token: 8_000_000 }; // 2 and 8 micros a token
const uneven = { input_token: 1_500_000, output_token: 2_500_000 }; // fractions rounded up per line

test('the cap is the most output tokens whose hold fits the balance, and one more would not', () => {
  for (const [p, available] of [
    [price, 1_000],
    [uneven, 777],
    [uneven, 16],
  ] as const) {
    const tokens = affordableOutputTokens({ input_token: 10 }, p, available, 4096);
    const hold = (n: number) => priceMicros({ input_token: 10, output_token: n }, p);
    assert.deepEqual({ fits: hold(tokens) <= available, nextFits: hold(tokens + 1) <= available }, { fits: true, nextFits: false });
  }
});

test('the cap never passes the model’s own', () => {
  assert.equal(affordableOutputTokens({ input_token: 10 }, price, 1_000_000_000, 4096), 4096);
});

test('a balance that cannot hold the prompt and one output token holds no cap', () => {
  assert.equal(affordableOutputTokens({ input_token: 10 }, price, 27, 4096), 0);
  assert.equal(affordableOutputTokens({ input_token: 10 }, price, 28, 4096), 1);
});
