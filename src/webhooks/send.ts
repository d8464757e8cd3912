// One signed webhook POST (spec §6.1): the headers every delivery carries, signed at send time
// with the secret given, through the SSRF-safe outgoing path. Shared by the outbox deliverer and
// the account's "send test event", so a test event is signed and refused exactly as deliveries are.
import { safeRequest } from '../net/safe-request.js';
import { signWebhook, WEBHOOK_HEADERS } from './sign.js';

const USER_AGENT = 'tollroute-webhooks';

export interface SignedWebhook {
  url: string;
  secret: string;
  eventId: string;
  /** The raw body, sent and signed as is. */
  payload: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** At most this many bytes of the answer are read. */
  maxResponseBytes: number;
  /** The field named in a refusal message. */
  field: string;
  now?: () => number;
}

/** The receiver's status and the start of its answer, or why it could not be reached (never thrown). */
export type WebhookAnswer = { status: number; body: Buffer; error?: undefined } | { status?: undefined; error: string };

export async function sendSignedWebhook({
  url,
  secret,
  eventId,
  payload,
  timeoutMs,
  allowPrivate,
  maxResponseBytes,
  field,
  now = Date.now,
}: SignedWebhook): Promise<WebhookAnswer> {
  const timestamp = Math.floor(now() / 1000);
  try {
    const response = await safeRequest(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        [WEBHOOK_HEADERS.timestamp]: String(timestamp),
        [WEBHOOK_HEADERS.signature]: signWebhook(secret, timestamp, payload),
        [WEBHOOK_HEADERS.eventId]: eventId,
      },
      body: payload,
      timeoutMs,
      allowPrivate,
      maxResponseBytes,
      field,
    });
    return { status: response.status, body: response.body };
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}
