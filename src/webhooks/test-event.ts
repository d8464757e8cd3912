// The account's "send test event": a `webhook.test` payload, signed with the account's current
// secret and sent through the same path, policy and timeout as real deliveries (send.ts), to a URL
// the holder names. Nothing is stored or retried: the holder sees the receiver's answer at once.
import { newId } from '../store/ids.js';
import { sendSignedWebhook } from './send.js';

/** How much of the receiver's answer is shown back. */
export const BODY_EXCERPT_CHARS = 300;

export interface TestEventResult {
  event_id: string;
  status_code?: number;
  response_ms?: number;
  body_excerpt?: string;
  signature_header_sent?: true;
  error?: string;
}

export async function sendTestEvent({
  url,
  accountId,
  secret,
  timeoutMs,
  allowPrivate,
}: {
  url: string;
  accountId: string;
  secret: string;
  timeoutMs: number;
  allowPrivate: boolean;
}): Promise<TestEventResult> {
  const eventId = newId('evt');
  const payload = JSON.stringify({ type: 'webhook.test', event_id: eventId, account_id: accountId, created_at: new Date().toISOString() });
  const started = performance.now();
  const answer = await sendSignedWebhook({
    url,
    secret,
    eventId,
    payload,
    timeoutMs,
    allowPrivate,
    // a few bytes past the excerpt, so a multi-byte character cut at the end stays whole
    maxResponseBytes: BODY_EXCERPT_CHARS * 4,
    field: 'url',
  });
  if (answer.error !== undefined) return { event_id: eventId, error: answer.error };
  return {
    event_id: eventId,
    status_code: answer.status,
    response_ms: Math.round(performance.now() - started),
    body_excerpt: answer.body.toString('utf8').slice(0, BODY_EXCERPT_CHARS),
    signature_header_sent: true,
  };
}
