// The console shows integer micros as currency units with integer arithmetic only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatMicros, sumMicros } from '../../console/src/money.js';

test('micros are shown as units with two to six decimals, exactly', () => {
  assert.equal(formatMicros(0), '0.00');
  assert.equal(formatMicros(12_500_000), '12.50');
  assert.equal(formatMicros(123), '0.000123');
  assert.equal(formatMicros(1_234_567_890), '1,234.56789');
  assert.equal(formatMicros(-1_000_000), '-1.00');
  assert.equal(formatMicros(-5), '-0.000005');
  // Past 2^53 a float would drift; BigInt does not.
  assert.equal(formatMicros(9_007_199_254_740_993n), '9,007,199,254.740993');
});

test('sums stay exact where floats would not', () => {
  // 0.1 + 0.2 in units: 100 000 + 200 000 micros.
  assert.equal(formatMicros(sumMicros([100_000, 200_000])), '0.30');
  assert.equal(sumMicros([Number.MAX_SAFE_INTEGER, 2]), 9_007_199_254_740_993n);
});
