// A plain chat answer reaches the caller as the upstream wrote it, byte for byte, with only its
// model changed to the public id; text that cannot be changed in place is rebuilt as before. (The
// compact answer holds what a parse and JSON.stringify would write otherwise: 1.0, 2e3, \u00e9.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

const CHOICES = '[{"index":0,"message":{"role":"assistant","content":"a \\"model\\": quoted"},"finish_reason":"stop"}]';
const USAGE = '{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}';

/** The upstream's answer text for each scripted user message; `model` is the id the gateway asked for. */
const ANSWERS: Record<string, (model: string) => string> = {
  compact: (model) =>
    `{"id":"c1","object":"chat.completion","created":1,"model":"${model}","system_fingerprint":null,"choices":${CHOICES},"usage":${USAGE},"x_vendor":{"b":1.0,"a":[2e3],"note":"caf\\u00e9"}}`,
  spaced: (model) => `{ "id": "c1", "model": "${model}", "choices": ${CHOICES}, "usage": ${USAGE} }\n`,
  nested: (model) => `{"id":"c1","model":"${model}","choices":${CHOICES},"usage":${USAGE},"routing":{"model":"${model}"}}`,
};

describe('plain chat answers as the upstream wrote them', () => {
  let gw: TestGateway;
  let upstream: ScriptedUpstream;
  let key: string;
  before(async () => {
    upstream = await startScriptedUpstream((body, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(ANSWERS[body.messages.at(-1).content]!(body.model));
    });
    const price = { input_token: 2_000_000, output_token: 8_000_000 };
    gw = await startTestGateway({
      channels: { scripted: { kind: 'openai', base_url: upstream.url, api_key: 'sk-scripted' } },
      models: {
        'pub-chat': { type: 'chat', channel: 'scripted', upstream_model: 'up-chat', price },
        'same-chat': { type: 'chat', channel: 'scripted', price },
      },
    });
    ({ key } = await gw.account({ creditMicros: 1_000_000 }));
  });
  after(async () => {
    await gw.close();
    upstream.close();
  });

  const chat = async (model: string, script: string, headers: Record<string, string> = {}) => {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: script }], max_tokens: 10 }),
    });
    return { status: res.statusCode, type: res.headers['content-type'], replayed: res.headers['idempotent-replayed'], text: await res.body.text() };
  };

  test('the answer is the upstream text byte for byte, its model renamed to the public id', async () => {
    const answer = await chat('pub-chat', 'compact');
    assert.equal(answer.status, 200);
    assert.equal(answer.text, ANSWERS.compact!('pub-chat'));
    assert.equal(answer.type, 'application/json; charset=utf-8');
  });

  test('an answer whose model is already the public id goes out unchanged, spacing and all', async () => {
    const answer = await chat('same-chat', 'spaced');
    assert.equal(answer.text, ANSWERS.spaced!('same-chat'));
    assert.equal(answer.type, 'application/json; charset=utf-8');
  });

  test('a model written with spaces is renamed by rebuilding the answer, nothing else changed', async () => {
    const answer = await chat('pub-chat', 'spaced');
    assert.equal(answer.type, 'application/json; charset=utf-8');
    assert.deepEqual(JSON.parse(answer.text), { ...JSON.parse(ANSWERS.spaced!('up-chat')), model: 'pub-chat' });
  });

  test('a second "model" key inside the answer is left alone, and only the top-level one renamed', async () => {
    const answer = await chat('pub-chat', 'nested');
    const parsed = JSON.parse(answer.text);
    assert.equal(parsed.model, 'pub-chat');
    assert.deepEqual(parsed.routing, { model: 'up-chat' });
  });

  test('an Idempotency-Key replay returns the same bytes as the first answer', async () => {
    const first = await chat('pub-chat', 'compact', { 'idempotency-key': 'text-replay' });
    const again = await chat('pub-chat', 'compact', { 'idempotency-key': 'text-replay' });
    assert.equal(first.text, ANSWERS.compact!('pub-chat'));
    assert.equal(again.replayed, 'true');
    assert.equal(again.text, first.text);
    assert.equal(again.type, first.type);
  });

  test('each answer is billed on its usage, whichever way it was written', async () => {
    const { accountId, key: own } = await gw.account({ creditMicros: 1_000_000 });
    for (const script of ['compact', 'spaced', 'nested']) {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${own}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'pub-chat', messages: [{ role: 'user', content: script }], max_tokens: 10 }),
      });
      assert.equal(res.statusCode, 200);
      await res.body.dump();
    }
    assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - 3 * (3 * 2 + 2 * 8));
  });
});
