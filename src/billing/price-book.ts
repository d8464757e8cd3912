// The prices each call is billed at: the model's configured prices, replaced by the operator's
// price changes from their effective time on, then the account's plan (a multiplier for every model
// or per model, or prices of its own). Held in memory, reloaded when the store's price_book version
// moves (every `prices.refresh_ms`), so the hot path reads a map and nothing else.
import type { Kysely } from 'kysely';
import { type Price, PriceSchema } from '../config/schema.js';
import { invalidRequest } from '../errors.js';
import type { PlanRow, PriceBookRows } from '../store/price-book.js';
import { readPriceBook, readPriceBookVersion } from '../store/price-book.js';
import type { DB } from '../store/schema.js';
import { mapPrice } from './prices.js';

export const PPM = 1_000_000;

/** A plan as the book applies it. */
export interface Plan {
  name: string;
  /** Parts per million; absent: 1. */
  multiplierPpm?: number;
  modelMultipliersPpm: Record<string, number>;
  prices: Record<string, Price>;
}

export interface PriceBook {
  /** The prices `accountId` pays for `modelId` now: `configured` (the model's), after price changes and the account's plan. */
  priceFor(accountId: string, modelId: string, configured: Price, now?: number): Price;
  /** The model's own prices at `now`, before any plan: the configured ones or the latest change in force. */
  basePrice(modelId: string, configured: Price, now?: number): Price;
  planOf(accountId: string): Plan | undefined;
  /** Reads the store again if its version moved (or `force`); the admin API calls it after each write. */
  refresh(force?: boolean): Promise<void>;
  start(): void;
  stop(): void;
}

/**
 * A multiplier as the admin API takes it (a number or a decimal string, at most six decimals, more
 * than 0 and at most 1 000), in parts per million: exact, so a plan's prices are whole micros.
 */
export function parseMultiplier(value: unknown, field: string): number {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\d+(\.\d{1,6})?$/.test(text)) {
    throw invalidRequest(`${field}: expected a decimal number with at most six decimals, such as 0.8, got ${JSON.stringify(value)}`);
  }
  const [whole = '0', fraction = ''] = text.split('.');
  const ppm = Number(whole) * PPM + Number(fraction.padEnd(6, '0'));
  if (ppm <= 0 || ppm > 1_000 * PPM) throw invalidRequest(`${field}: expected more than 0 and at most 1000, got ${text}`);
  return ppm;
}

/** The multiplier written back as the decimal it was given as. */
export const multiplierText = (ppm: number): string => (ppm / PPM).toFixed(6).replace(/\.?0+$/, '');

/** Every unit price times `ppm` parts per million, rounded half up to a whole micro, in integers. */
export function multiplied(price: Price, ppm: number): Price {
  if (ppm === PPM) return price;
  const factor = BigInt(ppm);
  const most = BigInt(Number.MAX_SAFE_INTEGER);
  return mapPrice(price, (perUnit) => {
    const product = (BigInt(perUnit) * factor + BigInt(PPM / 2)) / BigInt(PPM);
    return Number(product > most ? most : product);
  });
}

export function planOfRow(row: PlanRow): Plan {
  const multipliers = row.model_multipliers ? (JSON.parse(row.model_multipliers) as Record<string, number>) : {};
  const prices = row.prices ? (JSON.parse(row.prices) as Record<string, unknown>) : {};
  return {
    name: row.name,
    ...(row.multiplier_ppm !== null && { multiplierPpm: Number(row.multiplier_ppm) }),
    modelMultipliersPpm: multipliers,
    prices: Object.fromEntries(Object.entries(prices).map(([model, price]) => [model, PriceSchema.parse(price)])),
  };
}

interface Loaded {
  version: number;
  plans: Map<string, Plan>;
  accountPlans: Map<string, string>;
  /** Per model, its changes by rising effective time. */
  changes: Map<string, { effectiveAt: number; price: Price }[]>;
}

function load(rows: PriceBookRows): Loaded {
  const changes = new Map<string, { effectiveAt: number; price: Price }[]>();
  for (const row of rows.changes) {
    const list = changes.get(row.model) ?? [];
    list.push({ effectiveAt: Number(row.effective_at), price: PriceSchema.parse(JSON.parse(row.price)) });
    changes.set(row.model, list);
  }
  return {
    version: rows.version,
    plans: new Map(rows.plans.map((row) => [row.name, planOfRow(row)])),
    accountPlans: new Map(rows.accountPlans.filter((a) => a.plan !== null).map((a) => [a.id, a.plan!])),
    changes,
  };
}

export function createPriceBook({ db, refreshMs, onError }: { db: Kysely<DB>; refreshMs: number; onError?: (error: unknown) => void }): PriceBook {
  let book: Loaded = { version: -1, plans: new Map(), accountPlans: new Map(), changes: new Map() };
  // A plan's prices for a model, kept while the prices they were made from are the same object.
  const planned = new Map<string, { from: Price; price: Price }>();
  let timer: NodeJS.Timeout | undefined;

  function basePrice(modelId: string, configured: Price, now = Date.now()): Price {
    const changes = book.changes.get(modelId);
    if (!changes) return configured;
    let price = configured;
    for (const change of changes) if (change.effectiveAt <= now) price = change.price;
    return price;
  }

  function planned_(plan: Plan, modelId: string, base: Price): Price {
    const own = plan.prices[modelId];
    if (own) return own;
    const ppm = plan.modelMultipliersPpm[modelId] ?? plan.multiplierPpm ?? PPM;
    const key = `${plan.name}\0${modelId}`;
    const kept = planned.get(key);
    if (kept?.from === base) return kept.price;
    const price = multiplied(base, ppm);
    planned.set(key, { from: base, price });
    return price;
  }

  const planOf = (accountId: string) => {
    const name = book.accountPlans.get(accountId);
    return name === undefined ? undefined : book.plans.get(name);
  };

  async function refresh(force = false) {
    if (!force && (await readPriceBookVersion(db)) === book.version) return;
    book = load(await readPriceBook(db));
    planned.clear();
  }

  return {
    basePrice,
    planOf,
    priceFor(accountId, modelId, configured, now) {
      // The usual call: no change and no plan anywhere, the configured prices as they are.
      if (book.changes.size === 0 && book.accountPlans.size === 0) return configured;
      const base = basePrice(modelId, configured, now);
      const plan = planOf(accountId);
      return plan ? planned_(plan, modelId, base) : base;
    },
    refresh,
    start() {
      timer = setInterval(() => refresh().catch((error) => onError?.(error)), refreshMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
