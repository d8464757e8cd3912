// A local fake of the Stripe API, for the gateway's card top-ups: the SDK reaches it through
// `stripe.api` (host, port, protocol). It answers POST /v1/checkout/sessions as Stripe does (a
// form-encoded request, a session object), keeps what it was sent, can be told to fail, and serves
// a small page at each session's url. Webhook events are built as Stripe sends them and signed
// with the SDK's own generateTestHeaderString: a real Stripe-Signature header.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { request } from 'undici';

export const FAKE_SECRET_KEY = 'sk_test_fake0123456789abcdefSECRET';
export const FAKE_WEBHOOK_SECRET = 'whsec_fake0123456789abcdefWEBHOOK';

export interface SentSession {
  headers: IncomingHttpHeaders;
  /** The form fields as sent, bracketed keys and all (`line_items[0][price_data][unit_amount]`). */
  form: Record<string, string>;
}

export interface FakeStripe {
  url: string;
  port: number;
  /** Every create request that reached the fake, failed ones included. */
  sent: SentSession[];
  /** The sessions it answered, by id. */
  sessions: Map<string, Record<string, unknown>>;
  /** The next `count` creates are answered `status` (a Stripe error body). */
  failNext(status: number, count?: number): void;
  close(): Promise<void>;
}

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

export async function startFakeStripe({ secretKey = FAKE_SECRET_KEY }: { secretKey?: string } = {}): Promise<FakeStripe> {
  const sent: SentSession[] = [];
  const sessions = new Map<string, Record<string, unknown>>();
  let failures: { status: number; count: number } | undefined;
  let base = '';

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = (status: number, body: unknown, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type, 'request-id': randomId('req') });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      if (req.method === 'GET' && req.url?.startsWith('/pay/')) {
        const id = req.url.slice('/pay/'.length);
        return answer(200, `<!doctype html><title>Fake Checkout</title><h1>Pay ${id}</h1>`, 'text/html');
      }
      if (req.method !== 'POST' || req.url !== '/v1/checkout/sessions')
        return answer(404, { error: { type: 'invalid_request_error', message: 'no such route' } });
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      sent.push({ headers: req.headers, form });
      if (req.headers.authorization !== `Bearer ${secretKey}`) {
        return answer(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      }
      if (failures && failures.count > 0) {
        failures.count--;
        return answer(failures.status, { error: { type: 'api_error', message: 'the fake was told to fail' } });
      }
      const id = randomId('cs_test');
      const unitAmount = Number(form['line_items[0][price_data][unit_amount]']);
      const quantity = Number(form['line_items[0][quantity]'] ?? 1);
      const metadata = Object.fromEntries(
        Object.entries(form)
          .filter(([key]) => key.startsWith('metadata['))
          .map(([key, value]) => [key.slice('metadata['.length, -1), value]),
      );
      const session = {
        id,
        object: 'checkout.session',
        mode: form.mode,
        status: 'open',
        payment_status: 'unpaid',
        amount_total: unitAmount * quantity,
        amount_subtotal: unitAmount * quantity,
        currency: form['line_items[0][price_data][currency]'],
        client_reference_id: form.client_reference_id ?? null,
        metadata,
        payment_intent: null,
        success_url: form.success_url,
        cancel_url: form.cancel_url,
        url: `${base}/pay/${id}`,
        livemode: false,
        created: Math.floor(Date.now() / 1000),
      };
      sessions.set(id, session);
      return answer(200, session);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    port,
    sent,
    sessions,
    failNext(status, count = 1) {
      failures = { status, count };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The `stripe:` section of a gateway configured against the fake. */
export const stripeConfigFor = (fake: FakeStripe, overrides: Record<string, unknown> = {}) => ({
  secret_key: FAKE_SECRET_KEY,
  webhook_secret: FAKE_WEBHOOK_SECRET,
  max_network_retries: 0,
  api: { host: '127.0.0.1', port: fake.port, protocol: 'http' as const },
  ...overrides,
});

// ---- webhook events, as Stripe sends them

/** An event of `type` about `object`, with a fresh evt_ id unless one is given. */
export function stripeEvent(type: string, object: Record<string, unknown>, id = randomId('evt')) {
  return { id, object: 'event', api_version: Stripe.API_VERSION, created: Math.floor(Date.now() / 1000), livemode: false, type, data: { object } };
}

/** The session as Stripe reports it paid: completed, with its PaymentIntent. */
export const paidSession = (session: Record<string, unknown>, paymentIntent: string) => ({
  ...session,
  status: 'complete',
  payment_status: 'paid',
  payment_intent: paymentIntent,
});

export const chargeOf = (
  paymentIntent: string,
  { amount, amountRefunded, currency = 'usd' }: { amount: number; amountRefunded: number; currency?: string },
) => ({
  id: `ch_for_${paymentIntent}`,
  object: 'charge',
  amount,
  amount_refunded: amountRefunded,
  refunded: amountRefunded === amount,
  currency,
  payment_intent: paymentIntent,
});

export const disputeOf = (paymentIntent: string, { amount, status, currency = 'usd' }: { amount: number; status: string; currency?: string }) => ({
  id: randomId('dp'),
  object: 'dispute',
  amount,
  currency,
  status,
  charge: `ch_for_${paymentIntent}`,
  payment_intent: paymentIntent,
});

/** POSTs the event to the gateway's webhook, signed with `secret` (a real Stripe-Signature header) unless a header is given. */
export async function deliverEvent(
  gatewayUrl: string,
  event: unknown,
  { secret = FAKE_WEBHOOK_SECRET, signature }: { secret?: string; signature?: string | null } = {},
) {
  const payload = JSON.stringify(event);
  const header = signature === undefined ? Stripe.webhooks.generateTestHeaderString({ payload, secret }) : signature;
  const res = await request(`${gatewayUrl}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', ...(header !== null && { 'stripe-signature': header }) },
    body: payload,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}
