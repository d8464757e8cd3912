// Idempotency-Key replays end to end: which requests count as the same, and a replay admitted by
// the replaying key's own limits (its models and rate limit), as a fresh call would be.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('Idempotency-Key replays', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  /** A chat call with the body's text as written, so the order of its fields is the test's own. */
  const sendChat = async (key: string, idempotencyKey: string, text: string) => {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: text,
    });
    return { status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: (await res.body.json()) as any };
  };
  const CHAT = JSON.stringify({ model: 'sandbox-chat', max_tokens: 8, messages: [{ role: 'user', content: 'same order?' }] });

  test('the same body with its fields in another order, at any depth, is a replay and is charged once', async () => {
    const { accountId, key } = await gw.account();
    const first = await sendChat(key, 'reordered', CHAT);
    const reordered = await sendChat(key, 'reordered', '{"messages":[{"content":"same order?","role":"user"}],"max_tokens":8,"model":"sandbox-chat"}');
    assert.deepEqual(reordered, { status: 200, replayed: 'true', body: first.body });
    assert.equal((await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data.length, 1);
  });

  test('a replay by a key that may not use the model is refused with 403, calls and tasks alike', async () => {
    const { key } = await gw.account();
    const limited = (await gw.call(key, 'POST', '/v1/account/keys', { name: 'claude only', allowed_models: ['sandbox-claude'] })).body.key as string;
    assert.equal((await sendChat(key, 'by-owner', CHAT)).status, 200);
    const replay = await sendChat(limited, 'by-owner', CHAT);
    assert.equal(replay.status, 403);
    assert.match(replay.body.error, /may not use model sandbox-chat; it may use: sandbox-claude/);

    const image = { model: 'sandbox-image', prompt: 'a lighthouse' };
    assert.equal((await gw.call(key, 'POST', '/v1/images/async', image, { 'idempotency-key': 'image-1' })).status, 200);
    const taskReplay = await gw.call(limited, 'POST', '/v1/images/async', image, { 'idempotency-key': 'image-1' });
    assert.equal(taskReplay.status, 403);
    assert.match(taskReplay.body.error, /may not use model sandbox-image/);
  });

  test('replays count against the replaying key’s rate limit, and past it are refused with 429', async () => {
    const { key } = await gw.account({ rpm: 2 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await sendChat(key, 'rate-limited', CHAT));
    assert.deepEqual(
      answers.map((a) => [a.status, a.replayed]),
      [
        [200, undefined],
        [200, 'true'],
        [429, undefined],
      ],
    );
  });
});
