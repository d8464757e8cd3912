// The prices one call is billed at: the model's, or what the request picks among them (an image's
// size and quality), after the operator's price changes and the account's plan (billing/price-book.ts),
// less the model's batch discount for a line of a batch. Taken once, when the call starts: a call in
// flight keeps its prices whatever changes meanwhile.
import type { PriceBook } from '../billing/price-book.js';
import { mapPrice } from '../billing/prices.js';
import type { ModelConfig } from '../config/schema.js';
import type { MeteredEndpoint, MeteredRequest, ResolvedModel } from './types.js';

type Price = ModelConfig['price'];

/** Each unit price less `percent` off, rounded down to a whole micro: a discount never costs the caller a micro. */
export function discounted(price: Price, percent: number): Price {
  if (percent === 0) return price;
  return mapPrice(price, (perUnit) => Math.floor((perUnit * (100 - percent)) / 100));
}

/**
 * The model as this call is billed: itself when nothing changes its prices (the usual call, not
 * copied), else a copy whose config carries the call's prices, which every attempt's view inherits.
 */
export function pricedForCall<Body>(
  model: ResolvedModel,
  endpoint: MeteredEndpoint<Body>,
  request: MeteredRequest<Body>,
  book: Pick<PriceBook, 'priceFor'>,
): ResolvedModel {
  const picked = book.priceFor(request.caller.accountId, model.id, endpoint.price?.(request.body, model.config) ?? model.config.price);
  const price = request.batchLine ? discounted(picked, model.config.batch_discount) : picked;
  if (price === model.config.price) return model;
  return { ...model, config: { ...model.config, price } };
}
