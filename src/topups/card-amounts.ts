// A card payment's amount in micros and in the currency's minor units (cents), one exact integer
// exchange (`micros_per_minor_unit`): no float ever holds an amount (DESIGN §3).
import { requireMicros } from '../billing/movements.js';
import type { StripeConfig } from '../config/stripe-schema.js';
import { invalidRequest } from '../errors.js';

/** The minor units an account pays for `amountMicros`; a 400 naming amount_micros unless whole and within min and max. */
export function minorUnitsFor(config: StripeConfig, amountMicros: number): number {
  requireMicros('amount_micros', amountMicros, { min: 1 });
  const perMinor = config.micros_per_minor_unit;
  if (amountMicros % perMinor !== 0) {
    throw invalidRequest(`amount_micros: expected a whole number of ${config.currency} minor units (a multiple of ${perMinor} micros), got ${amountMicros}`);
  }
  if (amountMicros < config.min_amount_micros || amountMicros > config.max_amount_micros) {
    throw invalidRequest(`amount_micros: expected between ${config.min_amount_micros} and ${config.max_amount_micros} micros, got ${amountMicros}`);
  }
  return amountMicros / perMinor;
}

/** What `minor` units of the currency (an amount Stripe reports) are in micros; undefined when not a safe whole amount. */
export function microsOfMinorUnits(config: StripeConfig, minor: unknown): number | undefined {
  if (typeof minor !== 'number' || !Number.isSafeInteger(minor) || minor < 0) return undefined;
  const micros = minor * config.micros_per_minor_unit;
  return Number.isSafeInteger(micros) ? micros : undefined;
}
