// A key's limits, set by its account over the account API and enforced by the gateway on every
// endpoint and task kind: allowed models, expiry, daily and monthly spend caps, and its rate limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SEARCH = { Type: 'web', Query: 'bridges', Count: 3 }; // vendor-web-search: 5 000 micros a call, held and charged
const SEARCH_MICROS = 5_000;
const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user' as const, content: 'a b' }], max_tokens: 8 };

describe('key limits', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => gw.close());

  /** A key of a fresh account, with the limits given, made with the account's own unlimited key. */
  async function limitedKey(limits: Record<string, unknown>, { creditMicros = 10_000_000 } = {}) {
    const owner = await gw.account({ creditMicros });
    const created = await gw.call(owner.key, 'POST', '/v1/account/keys', { name: 'limited', ...limits });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { ...owner, limited: created.body.key as string, limitedId: created.body.id as string, shown: created.body };
  }
  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  test('a key limited to some models calls them, and any other model is refused with 403 naming the model, tasks included', async () => {
    const { limited } = await limitedKey({ allowed_models: ['sandbox-chat'] });
    const answer = await openai(limited).chat.completions.create(CHAT);
    assert.equal(answer.object, 'chat.completion');
    await assert.rejects(openai(limited).chat.completions.create({ ...CHAT, model: 'sandbox-claude' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.PermissionDeniedError);
      assert.match(error.message, /may not use model sandbox-claude; it may use: sandbox-chat/);
      return true;
    });
    const task = await gw.call(limited, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'a cat' });
    assert.equal(task.status, 403);
    assert.equal(task.body.type, 'invalid_request_error');
    assert.equal((await gw.call(limited, 'POST', '/v1/search', SEARCH)).status, 403);
  });

  test('allowed models must be models the gateway serves', async () => {
    const owner = await gw.account();
    const created = await gw.call(owner.key, 'POST', '/v1/account/keys', { name: 'x', allowed_models: ['sandbox-chat', 'no-such-model'] });
    assert.deepEqual(created, { status: 400, body: { error: 'allowed_models: unknown model no-such-model', type: 'invalid_request_error' } });
  });

  test('an expired key is refused with 401 saying it expired, and an expiry in the past is refused when set', async () => {
    const { key, limited, limitedId } = await limitedKey({ expires_at: new Date(Date.now() + 60_000).toISOString() });
    assert.equal((await gw.call(limited, 'POST', '/v1/search', SEARCH)).status, 200);
    const past = new Date(Date.now() - 1_000).toISOString();
    assert.equal((await gw.call(key, 'PATCH', `/v1/account/keys/${limitedId}`, { expires_at: past })).status, 400);
    // An expiry a moment ahead, then waited out: the key stops at it, even served from memory.
    const soon = Date.now() + 300;
    assert.equal((await gw.call(key, 'PATCH', `/v1/account/keys/${limitedId}`, { expires_at: new Date(soon).toISOString() })).status, 200);
    assert.equal((await gw.call(limited, 'POST', '/v1/search', SEARCH)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, soon - Date.now() + 20));
    const refused = await gw.call(limited, 'POST', '/v1/search', SEARCH);
    assert.equal(refused.status, 401);
    assert.match(refused.body.error, /^this API key expired at \d{4}-/);
  });

  test('twenty concurrent calls on a daily cap of five calls take exactly five; the rest get 402 naming the daily cap', async () => {
    const { accountId, key, limited, limitedId } = await limitedKey({ daily_cap_micros: 5 * SEARCH_MICROS });
    const answers = await Promise.all(Array.from({ length: 20 }, () => gw.call(limited, 'POST', '/v1/search', SEARCH)));
    assert.equal(answers.filter((a) => a.status === 200).length, 5);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      assert.equal(refused.status, 402);
      assert.equal(refused.body.type, 'billing_error');
      assert.match(refused.body.error, /daily spend cap of 0\.025000 is reached/);
    }
    const after = await gw.settled(accountId);
    assert.equal(after.balance_micros, 10_000_000 - 5 * SEARCH_MICROS);
    const listed = (await gw.call(key, 'GET', '/v1/account/keys')).body.data.find((k: { id: string }) => k.id === limitedId);
    // The month is shown too, though only the day is capped.
    assert.deepEqual(listed.spend, { day_micros: 5 * SEARCH_MICROS, month_micros: 5 * SEARCH_MICROS });
    // The account's other key is not capped.
    assert.equal((await gw.call(key, 'POST', '/v1/search', SEARCH)).status, 200);
  });

  test('a monthly cap refuses the call that would pass it, with 402 naming the monthly cap', async () => {
    const { limited } = await limitedKey({ monthly_cap_micros: SEARCH_MICROS + 1 });
    assert.equal((await gw.call(limited, 'POST', '/v1/search', SEARCH)).status, 200);
    const refused = await gw.call(limited, 'POST', '/v1/search', SEARCH);
    assert.equal(refused.status, 402);
    assert.match(refused.body.error, /monthly spend cap/);
  });

  test('a cap set later counts what the key already spent today, and takes effect at once', async () => {
    const { key, limited, limitedId } = await limitedKey({});
    for (let i = 0; i < 3; i++) assert.equal((await gw.call(limited, 'POST', '/v1/search', SEARCH)).status, 200);
    const patched = await gw.call(key, 'PATCH', `/v1/account/keys/${limitedId}`, { daily_cap_micros: 4 * SEARCH_MICROS });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.daily_cap_micros, 4 * SEARCH_MICROS);
    assert.equal((await gw.call(limited, 'POST', '/v1/search', SEARCH)).status, 200);
    assert.equal((await gw.call(limited, 'POST', '/v1/search', SEARCH)).status, 402);
    // Lifted: the key spends again.
    assert.equal((await gw.call(key, 'PATCH', `/v1/account/keys/${limitedId}`, { daily_cap_micros: null })).status, 200);
    assert.equal((await gw.call(limited, 'POST', '/v1/search', SEARCH)).status, 200);
  });

  test('a key with rpm 3 admits three of ten concurrent calls across endpoints, the rest 429', async () => {
    const { limited } = await limitedKey({ rpm: 3 });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0 ? gw.call(limited, 'POST', '/v1/search', SEARCH) : gw.call(limited, 'POST', '/v1/chat/completions', CHAT),
      ),
    );
    assert.equal(answers.filter((a) => a.status !== 429).length, 3);
    assert.ok(answers.every((a) => a.status === 200 || a.status === 429));
  });

  test('a key with limits may not issue or change keys, so it cannot lift its own limits', async () => {
    const { limited, limitedId } = await limitedKey({ daily_cap_micros: 1_000 });
    const issued = await gw.call(limited, 'POST', '/v1/account/keys', { name: 'escape' });
    assert.equal(issued.status, 403);
    assert.match(issued.body.error, /has limits \(its rpm included\), so it may not issue or change keys/);
    assert.equal((await gw.call(limited, 'PATCH', `/v1/account/keys/${limitedId}`, { daily_cap_micros: null })).status, 403);
  });

  test('a key with only an rpm counts as limited: it may not issue a key without an rpm nor lift its own', async () => {
    const { limited, limitedId } = await limitedKey({ rpm: 5 });
    const issued = await gw.call(limited, 'POST', '/v1/account/keys', { name: 'faster', rpm: null });
    assert.deepEqual(issued, {
      status: 403,
      body: {
        error: 'this API key has limits (its rpm included), so it may not issue or change keys; use a key without limits',
        type: 'invalid_request_error',
      },
    });
    assert.equal((await gw.call(limited, 'PATCH', `/v1/account/keys/${limitedId}`, { rpm: null })).status, 403);
  });

  test('a key with limits may revoke itself or another limited key, never a key without limits', async () => {
    const { key, keyId, limited, limitedId } = await limitedKey({ rpm: 5 });
    const other = await gw.call(key, 'POST', '/v1/account/keys', { name: 'capped', daily_cap_micros: 1_000 });
    const refused = await gw.call(limited, 'DELETE', `/v1/account/keys/${keyId}`);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error, `this API key has limits (its rpm included), so it may not revoke key ${keyId}, which has none; use a key without limits`);
    assert.equal((await gw.call(key, 'GET', '/v1/account')).status, 200);
    assert.equal((await gw.call(limited, 'DELETE', `/v1/account/keys/${other.body.id}`)).status, 200);
    assert.equal((await gw.call(limited, 'DELETE', `/v1/account/keys/${limitedId}`)).status, 200);
    assert.equal((await gw.call(limited, 'GET', '/v1/account')).status, 401);
  });

  test('a key with limits may not read or rotate the webhook secret; a key without may', async () => {
    const { key, limited } = await limitedKey({ allowed_models: ['sandbox-chat'] });
    for (const method of ['GET', 'POST']) {
      const refused = await gw.call(limited, method, '/v1/account/webhook-secret');
      assert.equal(refused.status, 403, method);
      assert.match(refused.body.error, /has limits .* may not read or rotate the webhook secret/);
    }
    const read = await gw.call(key, 'GET', '/v1/account/webhook-secret');
    assert.equal(read.status, 200);
    assert.match(read.body.secret, /^whsec_/);
  });

  test('a key is shown with its limits, and another account cannot change them', async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const { limitedId, shown } = await limitedKey({
      allowed_models: ['sandbox-chat'],
      daily_cap_micros: 7,
      monthly_cap_micros: 9,
      expires_at: expires,
      rpm: 5,
    });
    assert.deepEqual(
      { ...shown, id: undefined, key: undefined, prefix: undefined, created_at: undefined },
      {
        id: undefined,
        key: undefined,
        prefix: undefined,
        created_at: undefined,
        name: 'limited',
        rpm: 5,
        allowed_models: ['sandbox-chat'],
        daily_cap_micros: 7,
        monthly_cap_micros: 9,
        expires_at: expires,
        last_used_at: null,
        revoked_at: null,
        spend: { day_micros: 0, month_micros: 0 },
      },
    );
    const other = await gw.account();
    assert.equal((await gw.call(other.key, 'PATCH', `/v1/account/keys/${limitedId}`, { daily_cap_micros: null })).status, 404);
  });
});
