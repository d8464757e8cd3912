// Every price dimension: its own price where the model has one, the price it falls back to where
// not; long-context tiers; the request fee; a hold that covers the dearest split of its estimate.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { holdMicros, mapPrice, priceMicros, unitPrice, withRequestFee } from '../../src/billing/prices.js';
import { ConfigSchema } from '../../src/config/schema.js';

// Anthropic's published Sonnet figures, in micros per million tokens.
const SONNET = {
  input_token: 3_000_000,
  cached_input_token: 300_000,
  cache_write_token: 3_750_000,
  cache_write_1h_token: 6_000_000,
  output_token: 15_000_000,
  web_search: 10_000,
  tiers: [
    {
      above_input_tokens: 200_000,
      input_token: 6_000_000,
      cached_input_token: 600_000,
      cache_write_token: 7_500_000,
      cache_write_1h_token: 12_000_000,
      output_token: 22_500_000,
    },
  ],
};

test('each dimension is billed at its own price', () => {
  const units = { input_token: 12, cached_input_token: 5_000, cache_write_token: 1_000, cache_write_1h_token: 2_000, output_token: 30, web_search: 2 };
  const expected = Math.ceil((12 * 3_000_000) / 1e6) + 5_000 * 0.3 + 1_000 * 3.75 + 2_000 * 6 + 30 * 15 + 2 * 10_000;
  assert.equal(priceMicros(units, SONNET), expected);
});

test('a cached read costs a tenth of fresh input where the model prices it so', () => {
  assert.equal(priceMicros({ cached_input_token: 1_000_000 }, SONNET) * 10, priceMicros({ input_token: 1_000_000 }, SONNET));
});

test('a dimension the model does not price apart falls back to the input or output price', () => {
  const plain = { input_token: 2_000_000, output_token: 8_000_000 };
  assert.equal(unitPrice(plain, 'cached_input_token'), 2_000_000);
  assert.equal(unitPrice(plain, 'cache_write_1h_token'), 2_000_000);
  assert.equal(unitPrice(plain, 'audio_input_token'), 2_000_000);
  assert.equal(unitPrice(plain, 'reasoning_token'), 8_000_000);
  assert.equal(unitPrice(plain, 'audio_output_token'), 8_000_000);
  assert.equal(unitPrice(plain, 'web_search'), 0);
  assert.equal(unitPrice({ ...plain, cache_write_token: 2_500_000 }, 'cache_write_1h_token'), 2_500_000);
});

test('split units at fallback prices cost what the unsplit ones did', () => {
  const plain = { input_token: 2_000_000, output_token: 8_000_000 };
  fc.assert(
    fc.property(fc.nat(100_000), fc.nat(100_000), fc.nat(10_000), fc.nat(10_000), (fresh, cached, text, reasoning) => {
      const split = priceMicros({ input_token: fresh, cached_input_token: cached, output_token: text, reasoning_token: reasoning }, plain);
      return split === priceMicros({ input_token: fresh + cached, output_token: text + reasoning }, plain);
    }),
  );
});

test('past a tier’s prompt size every price of the tier applies; at it, the base prices still do', () => {
  const at = { input_token: 150_000, cached_input_token: 50_000, output_token: 1_000 };
  assert.equal(priceMicros(at, SONNET), 150_000 * 3 + 50_000 * 0.3 + 1_000 * 15);
  const past = { ...at, cached_input_token: 50_001 };
  assert.equal(priceMicros(past, SONNET), 150_000 * 6 + Math.ceil(50_001 * 0.6) + 1_000 * 22.5);
});

test('the highest tier passed applies', () => {
  const price = {
    input_token: 1_000_000,
    tiers: [
      { above_input_tokens: 10, input_token: 2_000_000 },
      { above_input_tokens: 20, input_token: 4_000_000 },
    ],
  };
  assert.deepEqual([priceMicros({ input_token: 10 }, price), priceMicros({ input_token: 15 }, price), priceMicros({ input_token: 25 }, price)], [10, 30, 100]);
});

test('the request fee is one call per settled call, only where the model has one', () => {
  assert.deepEqual(withRequestFee({ input_token: 3 }, { input_token: 1, call: 500 }), { input_token: 3, call: 1 });
  const noFee = { input_token: 3 };
  assert.equal(withRequestFee(noFee, { input_token: 1 }), noFee);
  assert.deepEqual(withRequestFee({ call: 2 }, { call: 500 }), { call: 2 });
});

test('a hold prices the whole prompt at the dearest input-side price, so no split of it can cost more', () => {
  const estimate = { input_token: 1_000, output_token: 100 };
  const held = holdMicros(estimate, SONNET);
  assert.equal(held, 1_000 * 6 + 100 * 15);
  fc.assert(
    fc.property(fc.nat(1_000), fc.nat(1_000), fc.nat(1_000), (cached, writes, writes1h) => {
      const parts = Math.min(cached + writes + writes1h, 1_000);
      const split = {
        input_token: 1_000 - parts,
        cached_input_token: Math.min(cached, parts),
        cache_write_token: 0,
        cache_write_1h_token: 0,
        output_token: 100,
      };
      split.cache_write_token = Math.min(writes, parts - split.cached_input_token);
      split.cache_write_1h_token = parts - split.cached_input_token - split.cache_write_token;
      return priceMicros(split, SONNET) <= held;
    }),
  );
});

test('a hold includes the request fee', () => {
  assert.equal(holdMicros({ input_token: 10 }, { input_token: 1_000_000, call: 700 }), 10 + 700);
});

test('a discount or multiplier reaches every unit price, the tiers’ too', () => {
  const halved = mapPrice(SONNET, (perUnit) => Math.floor(perUnit / 2));
  assert.equal(halved.cached_input_token, 150_000);
  assert.equal(halved.tiers?.[0]?.output_token, 11_250_000);
  assert.equal(halved.tiers?.[0]?.above_input_tokens, 200_000);
});

const configWithPrice = (price: unknown) =>
  ConfigSchema.safeParse({ channels: { c: { kind: 'openai', base_url: 'http://127.0.0.1:1' } }, models: { m: { type: 'chat', channel: 'c', price } } });

test('config validation names a price that is not whole micros', () => {
  const parsed = configWithPrice({ cached_input_token: 0.5 });
  assert.equal(parsed.success, false);
  assert.deepEqual(parsed.error?.issues[0]?.path, ['models', 'm', 'price', 'cached_input_token']);
});

test('config validation names an unknown price dimension', () => {
  const parsed = configWithPrice({ cache_read: 1 });
  assert.equal(parsed.success, false);
  assert.match(JSON.stringify(parsed.error?.issues), /cache_read/);
});

test('config validation names tiers out of order', () => {
  const parsed = configWithPrice({
    input_token: 1,
    tiers: [
      { above_input_tokens: 200, input_token: 2 },
      { above_input_tokens: 100, input_token: 3 },
    ],
  });
  assert.equal(parsed.success, false);
  assert.deepEqual(parsed.error?.issues[0]?.path, ['models', 'm', 'price', 'tiers', 1, 'above_input_tokens']);
});
