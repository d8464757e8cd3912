// Drafting prices from @pydantic/genai-prices: its US dollars become integer micros exactly, with the
// operator's markup rounded up once. Each package figure a test relies on is read from the package
// first, so a changed package fails on the figure rather than on arithmetic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findProvider } from '@pydantic/genai-prices';
import {
  type DraftOptions,
  draftPrice,
  type PackagePriceChoice,
  type PackagePrices,
  parseMarkup,
  pricesInForce,
  usdToMicros,
} from '../../src/billing/price-draft.js';
import { PriceSchema } from '../../src/config/schema.js';

const at = (markup: string, microsPerUsd = 1_000_000n): DraftOptions => ({ markup: parseMarkup(markup), microsPerUsd });

function packageModel(providerId: string, modelId: string) {
  const model = findProvider({ providerId })?.models.find((entry) => entry.id === modelId);
  assert.ok(model, `${providerId}/${modelId} is in the package`);
  return model;
}
const flatPrices = (providerId: string, modelId: string) => packageModel(providerId, modelId).prices as PackagePrices;

test('a model whose input is 3 USD per million tokens costs 3 000 000 micros per million at no markup and 3 600 000 at 20%', () => {
  const prices = flatPrices('anthropic', 'claude-sonnet-4-0');
  assert.equal(prices.input_mtok, 3);
  assert.equal(draftPrice(prices, at('0')).price.input_token, 3_000_000);
  assert.equal(draftPrice(prices, at('20')).price.input_token, 3_600_000);
});

test("each of a model's token prices lands on its own unit, and web searches per thousand become a price per search", () => {
  const prices = flatPrices('anthropic', 'claude-sonnet-4-0');
  assert.deepEqual(
    [prices.input_mtok, prices.cache_read_mtok, prices.cache_write_mtok, prices.cache_write_1h_mtok, prices.output_mtok, prices.web_searches_kcount],
    [3, 0.3, 3.75, 6, 15, 10],
  );
  assert.deepEqual(draftPrice(prices, at('0')), {
    price: {
      input_token: 3_000_000,
      cached_input_token: 300_000,
      cache_write_token: 3_750_000,
      cache_write_1h_token: 6_000_000,
      output_token: 15_000_000,
      web_search: 10_000, // 10 USD per 1 000 searches is 0.01 USD a search
    },
    notCarried: [],
  });
});

test('a fee per thousand requests becomes a fee per call', () => {
  const prices = flatPrices('perplexity', 'sonar-pro');
  assert.equal(prices.requests_kcount, 14);
  // 14 USD per 1 000 requests: 0.014 USD, 14 000 micros a call; 16 800 at 20%
  assert.equal(draftPrice(prices, at('20')).price.call, 16_800);
});

test('reasoning is priced apart only where the package prices it apart', () => {
  const apart = flatPrices('perplexity', 'sonar-deep-research');
  assert.deepEqual([apart.output_mtok, apart.output_reasoning_mtok], [8, 3]);
  assert.deepEqual([draftPrice(apart, at('0')).price.output_token, draftPrice(apart, at('0')).price.reasoning_token], [8_000_000, 3_000_000]);
  assert.equal('reasoning_token' in draftPrice(flatPrices('anthropic', 'claude-sonnet-4-0'), at('0')).price, false);
});

test('a price per hour of audio becomes a price per second, rounded up to a whole micro', () => {
  const prices = flatPrices('groq', 'whisper-large-v3');
  assert.equal(prices.input_audio_hours, 0.111);
  // 111 000 micros an hour is 30.83 micros a second: 31
  assert.equal(draftPrice(prices, at('0')).price.second, 31);
});

test('a package price with no tollroute unit is named as not carried and left out of the price', () => {
  const drafted = draftPrice(flatPrices('perplexity', 'sonar-deep-research'), at('0'));
  assert.deepEqual(drafted.notCarried, ['output_citation_mtok']);
  assert.deepEqual(Object.keys(drafted.price), ['input_token', 'output_token', 'reasoning_token', 'web_search']);
});

test('long-context prices become tiers past the same count of input tokens, each listing every price past it', () => {
  const prices = flatPrices('google', 'gemini-2.5-pro');
  assert.deepEqual(prices.input_mtok, { base: 1.25, tiers: [{ start: 200_000, price: 2.5 }] });
  assert.deepEqual(prices.output_mtok, { base: 10, tiers: [{ start: 200_000, price: 15 }] });
  assert.deepEqual(prices.cache_read_mtok, { base: 0.125, tiers: [{ start: 200_000, price: 0.25 }] });
  const { price } = draftPrice(prices, at('0'));
  assert.deepEqual(price, {
    input_token: 1_250_000,
    cached_input_token: 125_000,
    output_token: 10_000_000,
    tiers: [{ above_input_tokens: 200_000, input_token: 2_500_000, cached_input_token: 250_000, output_token: 15_000_000 }],
  });
  assert.equal(PriceSchema.safeParse(price).success, true);
});

test('units with tiers at different thresholds give one tier per threshold, in rising order', () => {
  const prices: PackagePrices = {
    input_mtok: {
      base: 1,
      tiers: [
        { start: 300_000, price: 3 },
        { start: 100_000, price: 2 },
      ],
    },
    output_mtok: { base: 4, tiers: [{ start: 200_000, price: 5 }] },
  };
  assert.deepEqual(draftPrice(prices, at('0')).price.tiers, [
    { above_input_tokens: 100_000, input_token: 2_000_000, output_token: 4_000_000 },
    { above_input_tokens: 200_000, input_token: 2_000_000, output_token: 5_000_000 },
    { above_input_tokens: 300_000, input_token: 3_000_000, output_token: 5_000_000 },
  ]);
});

test('a markup that leaves a fraction of a micro rounds up to the next whole micro', () => {
  // 0.000123 USD is 123 micros; 10% more is 135.3 micros: 136
  assert.equal(usdToMicros(0.000123, 1n, at('10')), 136);
  // a price cut rounds up too: 1 micro at -50% is half a micro, charged as 1
  assert.equal(usdToMicros(0.000001, 1n, at('-50')), 1);
});

test('a fractional markup is exact: 12.5% over 3 USD is 3 375 000 micros', () => {
  assert.equal(usdToMicros(3, 1n, at('12.5')), 3_375_000);
});

test('the conversion is exact where floating point drifts: 0.435 USD at 10% is 478 500 micros, not 478 501', () => {
  assert.equal(Math.ceil(0.435 * 1e6 * 1.1), 478_501, 'floating point overshoots here');
  assert.equal(usdToMicros(0.435, 1n, at('10')), 478_500);
});

test('micros per dollar converts to a balance kept in another unit', () => {
  // a balance in a currency at 7.1 to the dollar: 3 USD is 21.3 units, 21 300 000 micros
  assert.equal(usdToMicros(3, 1n, at('0', 7_100_000n)), 21_300_000);
});

test('a markup of -100% or below, or one that is not a number, is refused', () => {
  assert.throws(() => parseMarkup('-100'), /above -100 percent/);
  assert.throws(() => parseMarkup('-150'), /above -100 percent/);
  assert.throws(() => parseMarkup('twenty'), /markup in percent/);
});

test('a model priced anew from a date is drafted at the price in force on the date asked', () => {
  const choices = packageModel('anthropic', 'claude-sonnet-4-6').prices as PackagePriceChoice[];
  assert.equal(choices[1]?.constraint?.type === 'start_date' && choices[1].constraint.start_date, '2026-03-13');
  const before = draftPrice(pricesInForce(choices, new Date('2026-03-12T00:00:00Z')).prices, at('0')).price;
  const after = draftPrice(pricesInForce(choices, new Date('2026-03-13T00:00:00Z')).prices, at('0')).price;
  assert.equal(before.tiers?.[0]?.above_input_tokens, 200_000);
  assert.equal(after.tiers, undefined);
});

test('a model priced by time of day is drafted at the highest of its prices, so no hour is undercharged', () => {
  const choices = packageModel('deepseek', 'deepseek-chat').prices as PackagePriceChoice[];
  assert.deepEqual(
    choices.map((choice) => [choice.constraint?.type, choice.prices.input_mtok, choice.prices.output_mtok]),
    [
      [undefined, 0.135, 0.55],
      ['time_of_date', 0.27, 1.1],
    ],
  );
  const inForce = pricesInForce(choices, new Date('2026-06-01T20:00:00Z'));
  assert.equal(inForce.highestOfTimeOfDay, true);
  assert.deepEqual([draftPrice(inForce.prices, at('0')).price.input_token, draftPrice(inForce.prices, at('0')).price.output_token], [270_000, 1_100_000]);
});
