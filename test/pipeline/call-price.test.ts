import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Price } from '../../src/config/schema.js';
import { discounted, pricedForCall } from '../../src/pipeline/call-price.js';
import type { MeteredEndpoint, MeteredRequest, ResolvedModel } from '../../src/pipeline/types.js';

const model = { id: 'm', config: { price: { input_token: 2_000_001, call: 3 }, batch_discount: 50 } } as unknown as ResolvedModel;
const endpoint = {} as MeteredEndpoint<unknown>;
const request = (batchLine?: boolean) => ({ body: {}, batchLine, caller: { accountId: 'acct_1' } }) as MeteredRequest<unknown>;
// No price change and no plan: the configured prices as they are.
const book = { priceFor: (_account: string, _model: string, configured: Price) => configured };

test('a call with nothing to change its prices is billed on the model itself, not a copy', () => {
  assert.equal(pricedForCall(model, endpoint, request(), book), model);
});

test("a batch line is billed at the model's batch discount, each unit price rounded down", () => {
  assert.deepEqual(pricedForCall(model, endpoint, request(true), book).config.price, { input_token: 1_000_000, call: 1 });
});

test('a discount of 0 percent leaves the prices as they are', () => {
  const price = { output_token: 7 };
  assert.equal(discounted(price, 0), price);
});

test('an endpoint that picks a price by its request is billed at that price, and a batch line at that price less the discount', () => {
  const picking = { price: (body: { size: string }) => ({ image: body.size === 'big' ? 80_000 : 40_000 }) } as unknown as MeteredEndpoint<unknown>;
  const big = { body: { size: 'big' }, caller: { accountId: 'acct_1' } } as MeteredRequest<unknown>;
  assert.deepEqual(pricedForCall(model, picking, big, book).config.price, { image: 80_000 });
  assert.deepEqual(pricedForCall(model, picking, { ...big, batchLine: true }, book).config.price, { image: 40_000 });
});
