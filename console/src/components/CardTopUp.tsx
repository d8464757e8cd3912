// Paying by card: an amount, then Stripe Checkout; shown only when the gateway takes cards. The
// balance is credited by the gateway when Stripe confirms the payment, never by this page.
import { useState } from 'preact/hooks';
import { api, type CardOptions, type CheckoutSession, messageOf } from '../api';
import { formatMicros, parseUnits } from '../money';
import { useLoad } from '../use-load';
import { Failure } from './Notice';

/** `1234` minor units of `usd` → `12.34 USD`, by the currency's own decimals and integer arithmetic only. */
function formatMinor(minor: number, currency: string): string {
  const code = currency.toUpperCase();
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
  const text = String(minor).padStart(digits + 1, '0');
  return digits === 0 ? `${text} ${code}` : `${text.slice(0, -digits)}.${text.slice(-digits)} ${code}`;
}

/** What went back to the page from Stripe: ?payment=success or ?payment=cancelled. */
const RETURNED = new URLSearchParams(location.search).get('payment');

/** Why `micros` cannot be paid, or undefined when it can. */
function refusal(micros: number | undefined, options: CardOptions): string | undefined {
  const { micros_per_minor_unit: perMinor, min_amount_micros: min, max_amount_micros: max } = options;
  if (micros === undefined) return 'Enter an amount, such as 20 or 12.50.';
  if (perMinor && micros % perMinor !== 0) return `The amount must be a whole number of ${options.currency?.toUpperCase()} minor units.`;
  if (min !== null && micros < min) return `The least you can add is ${formatMicros(min)}.`;
  if (max !== null && micros > max) return `The most you can add at once is ${formatMicros(max)}.`;
  return undefined;
}

export function CardTopUp() {
  const options = useLoad(() => api<CardOptions>('GET', '/v1/account/card-payments/options'));
  const [amount, setAmount] = useState('');
  const [paying, setPaying] = useState(false);
  const [failure, setFailure] = useState<string>();

  const card = options.data;
  if (!card?.enabled || !card.currency || !card.micros_per_minor_unit) return null;
  const micros = parseUnits(amount);
  const problem = amount === '' ? undefined : refusal(micros, card);
  const price = micros !== undefined && problem === undefined ? formatMinor(micros / card.micros_per_minor_unit, card.currency) : undefined;

  const pay = async (event: Event) => {
    event.preventDefault();
    const why = refusal(micros, card);
    if (why) return setFailure(why);
    setPaying(true);
    setFailure(undefined);
    try {
      const session = await api<CheckoutSession>('POST', '/v1/account/checkout-sessions', { amount_micros: micros });
      // Stripe's page takes the card; it sends the browser back to this page afterwards.
      location.assign(session.url);
    } catch (caught) {
      setFailure(messageOf(caught));
      setPaying(false);
    }
  };

  return (
    <section>
      <h2>Pay by card</h2>
      {RETURNED === 'success' && <p role="status">Payment received. The balance is credited as soon as Stripe confirms it, usually within seconds.</p>}
      {RETURNED === 'cancelled' && <p role="status">The card payment was cancelled; nothing was charged.</p>}
      <p>
        Paid through Stripe Checkout in {card.currency.toUpperCase()}: from {formatMicros(card.min_amount_micros ?? 0)} to{' '}
        {formatMicros(card.max_amount_micros ?? 0)} at a time.
      </p>
      <form class="inline" onSubmit={pay}>
        <label for="card-amount">Amount to add</label>
        <input id="card-amount" inputMode="decimal" required placeholder="20.00" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
        <button type="submit" disabled={paying}>
          {paying ? 'Opening Stripe…' : 'Pay by card'}
        </button>
      </form>
      {price && <p data-testid="card-price">You pay {price}.</p>}
      {problem && <p class="hint">{problem}</p>}
      <Failure message={failure} />
    </section>
  );
}
