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
 * an `X-Service-Timestamp` within `toleranceSeconds` of `now()` (either side: replay protection).
 * A missing or malformed header is false, never an exception.
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
  return given.length === expected.length && timingSafeEqual(given, expected);
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
