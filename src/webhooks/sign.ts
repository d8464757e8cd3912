// The webhook signature of spec §6.1: `sha256=` + hex HMAC-SHA256, keyed with the account's
// webhook secret, over `<timestamp>.<raw body>`. Shared by the deliverer and by receivers
// (through the package entry), so both sides compute it from one definition. The event id is
// signed as part of the body (its `event_id`, equal to the X-Service-Event-Id header; verify.ts).
import { createHmac } from 'node:crypto';

export const WEBHOOK_HEADERS = {
  timestamp: 'X-Service-Timestamp',
  signature: 'X-Service-Signature',
  eventId: 'X-Service-Event-Id',
} as const;

/** `sha256=<hex>` for a body sent at `timestamp` (Unix seconds). */
export function signWebhook(secret: string, timestamp: number, rawBody: string | Buffer): string {
  return `sha256=${webhookDigest(secret, timestamp, rawBody).toString('hex')}`;
}

export function webhookDigest(secret: string, timestamp: number, rawBody: string | Buffer): Buffer {
  // Bytes as received: a Buffer is hashed as is, never re-encoded through a string.
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
}
