// What a receiver runs on each webhook it gets:
//   if (!verifyWebhook(process.env.WEBHOOK_SECRET!, req.headers, rawBody)) return res.writeHead(401).end();
// `rawBody` is the body exactly as received (before JSON.parse): the signature covers its bytes.
import { timingSafeEqual } from 'node:crypto';
import { WEBHOOK_HEADERS, webhookDigest } from './sign.js';

/** Node's `req.headers`, a plain record in any letter case, or a fetch `Headers`. */
export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers;

export const DEFAULT_TOLERANCE_SECONDS = 300;

const TIMESTAMP = /^\d{1,15}$/;
const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * True when the request carries a valid `X-Service-Signature` for `rawBody` under `secret` and
 * an `X-Service-Timestamp` within `toleranceSeconds` of `now()` (either side: replay protection),
 * and its `X-Service-Event-Id`, when sent, equals the signed body's `event_id`, when it has one
 * (the header alone is not signed: a replay under another event id must not pass a receiver's
 * deduplication). A missing or malformed header is false, never an exception.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Buffer,
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
  now: () => number = Date.now,
): boolean {
  const timestampText = readHeader(headers, WEBHOOK_HEADERS.timestamp);
  const signatureText = readHeader(headers, WEBHOOK_HEADERS.signature);
  if (!timestampText || !signatureText || !TIMESTAMP.test(timestampText)) return false;
  const timestamp = Number(timestampText);
  if (Math.abs(now() / 1000 - timestamp) > toleranceSeconds) return false;
  const hex = SIGNATURE.exec(signatureText)?.[1];
  if (!hex) return false;
  const given = Buffer.from(hex, 'hex');
  const expected = webhookDigest(secret, timestamp, rawBody);
  // Both are 32 bytes here (the pattern fixed the length), as timingSafeEqual requires.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  const eventId = readHeader(headers, WEBHOOK_HEADERS.eventId);
  const signedEventId = eventId === undefined ? undefined : signedEventIdOf(rawBody);
  return signedEventId === undefined || signedEventId === eventId;
}

/** The body's `event_id`; undefined when it has none (a callback queued before bodies carried it). */
function signedEventIdOf(rawBody: string | Buffer): string | null | undefined {
  try {
    const body: unknown = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
    if (typeof body !== 'object' || body === null || !('event_id' in body)) return undefined;
    const { event_id: eventId } = body as { event_id: unknown };
    return typeof eventId === 'string' ? eventId : null; // present but not a string never matches
  } catch {
    return undefined; // not JSON: the signature alone vouches for it, as before
  }
}

function readHeader(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name)?.trim() ?? undefined;
  const wanted = name.toLowerCase();
  const values = Object.entries(headers as Record<string, string | string[] | undefined>)
    .filter(([key, value]) => key.toLowerCase() === wanted && value !== undefined)
    .flatMap(([, value]) => value as string | string[]);
  // A header sent twice is ambiguous (which one did the sender mean?), so neither counts.
  return values.length === 1 ? values[0]?.trim() : undefined;
}
