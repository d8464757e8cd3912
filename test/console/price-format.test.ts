// The Models and prices page shows per-token decimals per million tokens, moved by string
// arithmetic so no float rounds a price.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shiftDecimal, shownRate } from '../../console/src/price-format.js';

test('a price per token is shown per million tokens: 0.000003 is 3', () => {
  assert.equal(shownRate('prompt', '0.000003'), '3');
});

test('a price per million tokens keeps the decimals a float would blur: 0.0000025 is 2.5, 0.000000013 is 0.013', () => {
  assert.equal(shownRate('completion', '0.0000025'), '2.5');
  assert.equal(shownRate('input_cache_read', '0.000000013'), '0.013');
  assert.notEqual(String(0.000000013 * 1e6), '0.013', 'a float gives 0.013000000000000001 here');
});

test('a price per request, search or second is shown per unit, as given', () => {
  assert.equal(shownRate('request', '0.001'), '0.001');
  assert.equal(shownRate('web_search', '0.0100'), '0.01');
});

test('large figures are grouped by thousands and lose no digit', () => {
  assert.equal(shiftDecimal('1234.5', 6), '1,234,500,000');
  assert.equal(shiftDecimal('9007199254.740993', 6), '9,007,199,254,740,993');
});

test('zero and figures in exponent form come out as plain decimals', () => {
  assert.equal(shiftDecimal('0', 6), '0');
  assert.equal(shiftDecimal('0.000000', 6), '0');
  assert.equal(shiftDecimal('3e-6', 6), '3');
  assert.equal(shiftDecimal('1e-10', 6), '0.0001');
});

test('text that is not a decimal is shown as it came', () => {
  assert.equal(shiftDecimal('n/a', 6), 'n/a');
});
