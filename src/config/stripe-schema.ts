// tollroute.yaml `stripe:`: card top-ups through Stripe Checkout, on when the operator gives its keys.
// The keys are secrets: give them as `${STRIPE_SECRET_KEY}` and `${STRIPE_WEBHOOK_SECRET}` (load.ts
// substitutes the environment); nothing logs them.
import { z } from 'zod';

const positiveInt = z.number().int().positive();

export const StripeConfigSchema = z
  .object({
    /** The API secret key (sk_live_… / sk_test_… / rk_…): the gateway creates Checkout Sessions with it. */
    secret_key: z.string().min(1),
    /** The signing secret of the webhook endpoint (whsec_…) that points at POST /webhooks/stripe. */
    webhook_secret: z.string().min(1),
    /** ISO 4217, lower case, as Stripe writes it. */
    currency: z
      .string()
      .regex(/^[a-z]{3}$/, 'expected a three-letter currency code in lower case, e.g. usd')
      .default('usd'),
    /** Micros one minor unit of the currency buys: 10 000 makes 1 cent = 0.01 balance unit. */
    micros_per_minor_unit: positiveInt.default(10_000),
    min_amount_micros: positiveInt.default(1_000_000),
    max_amount_micros: positiveInt.default(1_000_000_000),
    /** The line item's name on the Checkout page and the receipt. */
    product_name: z.string().min(1).max(200).default('Balance top-up'),
    /** Where Stripe sends the customer after paying or going back; default: the console's Top-ups page. */
    success_url: z.string().url().optional(),
    cancel_url: z.string().url().optional(),
    /** How far a signed webhook's timestamp may be from now. */
    webhook_tolerance_seconds: positiveInt.default(300),
    timeout_ms: positiveInt.default(30_000),
    /** Retries of a failed API call by the SDK, with the same idempotency key. */
    max_network_retries: z.number().int().min(0).max(10).default(2),
    /** Another address for Stripe's API (a local fake in tests); unset: api.stripe.com. */
    api: z
      .object({
        host: z.string().min(1),
        port: z.number().int().min(1).max(65535).optional(),
        protocol: z.enum(['http', 'https']).default('https'),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((stripe, ctx) => {
    if (stripe.min_amount_micros > stripe.max_amount_micros)
      ctx.addIssue({ code: 'custom', path: ['max_amount_micros'], message: 'must be at least min_amount_micros' });
    for (const field of ['min_amount_micros', 'max_amount_micros'] as const) {
      if (stripe[field] % stripe.micros_per_minor_unit !== 0)
        ctx.addIssue({ code: 'custom', path: [field], message: `must be a whole number of minor units (${stripe.micros_per_minor_unit} micros each)` });
    }
  })
  .optional();

export type StripeConfig = NonNullable<z.output<typeof StripeConfigSchema>>;
