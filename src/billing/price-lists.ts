// The price list a usage row was billed at, named by a hash of its content and kept once in
// `price_lists` (store/price-list-tables.ts). A call's prices are one object for its whole life
// (pipeline/call-price.ts), most often the model's own config object: its id is computed once per
// object, and each store's lists are written once per process, so a call at known prices costs a
// map lookup and no statement.
import { createHash } from 'node:crypto';
import type { Price } from '../config/schema.js';
import { canonicalJson } from '../http/canonical-json.js';
import type { Store } from '../store/open.js';
import { insertPriceList, priceListExists } from '../store/price-list-tables.js';

interface PriceList {
  id: string;
  json: string;
}

const listsByObject = new WeakMap<Price, PriceList>();

function priceListOf(prices: Price): PriceList {
  let list = listsByObject.get(prices);
  if (!list) {
    // Sorted keys at any depth: two lists that differ only in the order of their fields are one.
    const json = canonicalJson(prices);
    list = { id: `pl_${createHash('sha256').update(json).digest('hex').slice(0, 16)}`, json };
    listsByObject.set(prices, list);
  }
  return list;
}

/** The id of the price list: `pl_` and the first 16 hex digits of the SHA-256 of its canonical JSON. */
export const priceListId = (prices: Price): string => priceListOf(prices).id;

/** The lists this process has seen written to each store. */
const storedByStore = new WeakMap<Store, Set<string>>();

/** The ids of the lists this process knows `store` keeps. */
function storedIn(store: Store): Set<string> {
  let stored = storedByStore.get(store);
  if (!stored) storedByStore.set(store, (stored = new Set()));
  return stored;
}

/**
 * Makes sure the store keeps the price list before a usage row names it. Undefined (no promise, no
 * statement) when this process wrote it to this store already; else one insert that a row written
 * meanwhile, by this process or another, leaves alone. A failure rejects: the settle that needed
 * it is kept and retried as any settle the store refused (settlements.ts).
 */
export function savePriceList(store: Store, prices: Price, now = Date.now()): Promise<void> | undefined {
  return storedIn(store).has(priceListOf(prices).id) ? undefined : savePriceLists(store, [prices], now);
}

/**
 * Every list of `prices` the store may not keep yet, in one insert (at start: the configured
 * models' lists, many of them the same), so a call at one of them writes nothing of its own.
 */
export async function savePriceLists(store: Store, prices: Price[], now = Date.now()): Promise<void> {
  const known = storedIn(store);
  const missing = new Map(
    prices
      .map(priceListOf)
      .filter((list) => !known.has(list.id))
      .map((list) => [list.id, list]),
  );
  if (missing.size === 0) return;
  await insertPriceList(
    store.db,
    [...missing.values()].map((list) => ({ id: list.id, prices: list.json, created_at: now })),
  );
  for (const id of missing.keys()) known.add(id);
}

/** Whether the store keeps the list of this id: known to this process already, else asked of the store once. */
export async function storeKeepsPriceList(store: Store, id: string): Promise<boolean> {
  const known = storedIn(store);
  if (known.has(id)) return true;
  const kept = await priceListExists(store.db, id);
  if (kept) known.add(id);
  return kept;
}

/** The price_id of a settle's usage row: the id given, else that of its prices, else null (not known). */
export const usagePriceId = ({ prices, priceId }: { prices?: Price; priceId?: string | null }): string | null =>
  priceId ?? (prices ? priceListId(prices) : null);
