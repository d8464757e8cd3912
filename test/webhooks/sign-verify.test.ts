import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { signWebhook, verifyWebhook } from '../../src/index.js';

const secret = 'whsec_test-secret';
const body = '{"task_id":"task_1","status":"succeeded","model":"sandbox-video"}';
const sentAt = 1_700_000_000; // Unix seconds
const at = (seconds: number) => () => seconds * 1000;
const signed = (timestamp = sentAt, rawBody = body, key = secret) => ({
  'X-Service-Timestamp': String(timestamp),
  'X-Service-Signature': signWebhook(key, timestamp, rawBody),
});

describe('signWebhook', () => {
  test('is sha256= and the hex HMAC-SHA256 of "<timestamp>.<raw body>" under the secret', () => {
    const expected = createHmac('sha256', secret).update(`${sentAt}.${body}`).digest('hex');
    assert.equal(signWebhook(secret, sentAt, body), `sha256=${expected}`);
  });

  test('a Buffer body signs its bytes, the same as the string they encode', () => {
    const text = '{"name":"视频 ✓"}';
    assert.equal(signWebhook(secret, sentAt, Buffer.from(text)), signWebhook(secret, sentAt, text));
  });
});

describe('verifyWebhook', () => {
  test('accepts a signature made now, from Node headers in any case, a Buffer body, or fetch Headers', () => {
    const lower = { 'x-service-timestamp': String(sentAt), 'x-service-signature': signWebhook(secret, sentAt, body) };
    assert.deepEqual(
      [
        verifyWebhook(secret, signed(), body, 300, at(sentAt)),
        verifyWebhook(secret, lower, body, 300, at(sentAt)),
        verifyWebhook(secret, signed(), Buffer.from(body), 300, at(sentAt)),
        verifyWebhook(secret, new Headers(signed()), body, 300, at(sentAt)),
        verifyWebhook(secret, { 'X-SERVICE-TIMESTAMP': [String(sentAt)], 'x-Service-Signature': signed()['X-Service-Signature'] }, body, 300, at(sentAt)),
      ],
      [true, true, true, true, true],
    );
  });

  test('the tolerance window holds on both sides, 300 s by default', () => {
    const check = (nowSeconds: number, tolerance?: number) => verifyWebhook(secret, signed(), body, tolerance, at(nowSeconds));
    assert.deepEqual(
      [check(sentAt + 300), check(sentAt + 301), check(sentAt - 300), check(sentAt - 301), check(sentAt + 60, 30), check(sentAt + 30, 30)],
      [true, false, true, false, false, true],
    );
  });

  test('the default clock is Date.now', () => {
    const now = Math.floor(Date.now() / 1000);
    assert.equal(verifyWebhook(secret, signed(now), body), true);
    assert.equal(verifyWebhook(secret, signed(now - 3600), body), false);
  });

  test('a tampered body, a wrong secret or a changed timestamp fails', () => {
    const headers = signed();
    assert.deepEqual(
      [
        verifyWebhook(secret, headers, body.replace('succeeded', 'failed'), 300, at(sentAt)),
        verifyWebhook(secret, headers, `${body} `, 300, at(sentAt)),
        verifyWebhook('whsec_other', headers, body, 300, at(sentAt)),
        verifyWebhook(secret, { ...headers, 'X-Service-Timestamp': String(sentAt + 1) }, body, 300, at(sentAt)),
      ],
      [false, false, false, false],
    );
  });

  test('missing or malformed headers are false, never a throw', () => {
    const good = signed();
    const signature = good['X-Service-Signature'];
    const hex = signature.slice('sha256='.length);
    const variants: Record<string, string | string[] | undefined>[] = [
      {},
      { 'X-Service-Timestamp': String(sentAt) },
      { 'X-Service-Signature': signature },
      { ...good, 'X-Service-Signature': hex }, // no sha256= prefix
      { ...good, 'X-Service-Signature': `sha1=${hex}` },
      { ...good, 'X-Service-Signature': `${signature.slice(0, -2)}` }, // too short
      { ...good, 'X-Service-Signature': `${signature}00` }, // too long
      { ...good, 'X-Service-Signature': `${signature.slice(0, -1)}g` }, // not hex
      { ...good, 'X-Service-Signature': '' },
      { ...good, 'X-Service-Timestamp': 'yesterday' },
      { ...good, 'X-Service-Timestamp': `${sentAt}.5` },
      { ...good, 'X-Service-Timestamp': `-${sentAt}` },
      { ...good, 'X-Service-Timestamp': '1e9' },
      { ...good, 'X-Service-Timestamp': undefined },
      { ...good, 'X-Service-Signature': [signature, signature] }, // sent twice: ambiguous
      { ...good, 'x-service-signature': signature }, // the same header in two cases: ambiguous
    ];
    assert.deepEqual(
      variants.map((headers) => verifyWebhook(secret, headers, body, 300, at(sentAt))),
      variants.map(() => false),
    );
  });

  test('an upper-case hex signature is the same signature', () => {
    const headers = signed();
    const upper = `sha256=${headers['X-Service-Signature'].slice(7).toUpperCase()}`;
    assert.equal(verifyWebhook(secret, { ...headers, 'X-Service-Signature': upper }, body, 300, at(sentAt)), true);
  });

  test("the event id is covered by the signature: a header that differs from the signed body's event_id fails", () => {
    const withId = '{"task_id":"task_1","event_id":"evt_1","status":"succeeded"}';
    const headers = (eventId?: string) => ({ ...signed(sentAt, withId), ...(eventId !== undefined && { 'X-Service-Event-Id': eventId }) });
    assert.deepEqual(
      [
        verifyWebhook(secret, headers('evt_1'), withId, 300, at(sentAt)),
        verifyWebhook(secret, headers('evt_2'), withId, 300, at(sentAt)),
        verifyWebhook(secret, headers(), withId, 300, at(sentAt)),
        verifyWebhook(secret, { ...signed(sentAt, '{"event_id":7}'), 'X-Service-Event-Id': '7' }, '{"event_id":7}', 300, at(sentAt)),
      ],
      [true, false, true, false],
    );
  });

  test('a body without event_id (a callback queued before bodies carried it) verifies on its signature alone, as before', () => {
    assert.equal(verifyWebhook(secret, { ...signed(), 'X-Service-Event-Id': 'evt_any' }, body, 300, at(sentAt)), true);
  });
});
