// The Stripe SDK client of the gateway's card top-ups, built once from `stripe:` (config/stripe-schema.ts).
// The secret key goes to the SDK alone: it is never logged, and never part of an error the caller sees.
import type Stripe from 'stripe';
import type { StripeConfig } from '../config/stripe-schema.js';

// The SDK is loaded only where card top-ups are configured: it takes about a sixth of a second to load.
export async function createStripeClient(config: StripeConfig): Promise<Stripe> {
  const { default: Stripe } = await import('stripe');
  return new Stripe(config.secret_key, {
    maxNetworkRetries: config.max_network_retries,
    timeout: config.timeout_ms,
    // No request latencies sent to Stripe with the next call.
    telemetry: false,
    ...(config.api && { host: config.api.host, port: config.api.port, protocol: config.api.protocol }),
  });
}

/** Card top-ups as the routes see them: on with Stripe's client and settings, or off (no `stripe:` section). */
export type CardPayments = { config: StripeConfig; stripe: Stripe } | undefined;

export const cardPaymentsOf = async (config: StripeConfig | undefined): Promise<CardPayments> =>
  config ? { config, stripe: await createStripeClient(config) } : undefined;
