// A small balance makes a cheap call: a chat call that names no output cap is held for the model's
// whole cap, and when the balance cannot hold that, the cap is lowered to what the balance holds,
// sent upstream as the request's own cap, and told to the caller in a response header. Only a call
// already refused reaches here: an ample balance costs nothing more.
import type { HeldAtOnce } from '../billing/ledger.js';
import { holdMicros, type Units } from '../billing/prices.js';
import type { ModelConfig } from '../config/schema.js';
import { GatewayError, insufficientBalance } from '../errors.js';

/**
 * The most output tokens, up to `cap`, that `availableMicros` holds beside the rest of the estimate
 * (the prompt); 0 when it cannot hold even the prompt and one token. A search over the price itself,
 * so its rounding is the hold's own.
 */
export function affordableOutputTokens(estimate: Units, price: ModelConfig['price'], availableMicros: number, cap: number): number {
  const costs = (tokens: number) => holdMicros({ ...estimate, output_token: tokens }, price);
  if (costs(1) > availableMicros) return 0;
  let low = 1; // affordable
  let high = cap; // the largest still possible
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (costs(mid) <= availableMicros) low = mid;
    else high = mid - 1;
  }
  return low;
}

export interface LoweredHold<Body> {
  hold: HeldAtOnce;
  estimate: Units;
  body: Body;
  /** The output cap sent upstream in place of the model's maximum. */
  outputCap: number;
}

/**
 * After a hold for the model's whole output cap was refused for want of funds: the hold for the cap
 * the balance holds, with the request made to ask for no more. Rethrows the refusal when the call
 * cannot be lowered (its body names a cap, or the model holds a fixed amount), and a 402 saying the
 * least the call needs when the balance cannot hold the prompt and one output token.
 */
export async function holdWithLoweredCap<Body>(
  refusal: unknown,
  {
    estimate,
    model,
    withOutputCap,
    hold,
  }: {
    estimate: Units;
    model: ModelConfig;
    /** The body asking for `tokens` at most; undefined when the body names its own cap. */
    withOutputCap: ((tokens: number) => Body) | undefined;
    hold: (amountMicros: number) => HeldAtOnce | Promise<HeldAtOnce>;
  },
): Promise<LoweredHold<Body>> {
  const cap = estimate.output_token;
  const funds = refusal instanceof GatewayError ? refusal.funds : undefined;
  if (!funds || !withOutputCap || model.hold_micros !== undefined || cap === undefined || cap <= 1) throw refusal;
  const tokens = affordableOutputTokens(estimate, model.price, funds.availableMicros, cap);
  if (tokens === 0) {
    const neededMicros = holdMicros({ ...estimate, output_token: 1 }, model.price);
    throw insufficientBalance({ neededMicros, availableMicros: funds.availableMicros, atLeast: true });
  }
  const lowered = { ...estimate, output_token: tokens };
  return { hold: await hold(holdMicros(lowered, model.price)), estimate: lowered, body: withOutputCap(tokens), outputCap: tokens };
}
