// A small balance makes a cheap call: a chat call that names no output cap, whose balance cannot hold
// the model's whole cap, goes upstream with the cap the balance holds (said in a response header),
// and is held for exactly that; a balance that cannot hold the prompt and one token is a 402 saying
// what the call needs and what the account has.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const HEADER = 'x-tollroute-max-tokens-lowered';
const OUTPUT_PRICE = 8; // micros per output token of sandbox-chat (DESIGN section 9)
const PROMPT = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');

describe('an output cap lowered to what the balance holds', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());
  beforeEach(() => gw.sandboxControl('DELETE', '/__sandbox/requests'));

  const post = (key: string, path: string, body: unknown) =>
    request(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const upstreamBody = async (kind: string) => {
    const sent = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.filter((r: { kind: string }) => r.kind === kind);
    return sent.at(-1).body;
  };
  const heldMicros = async (accountId: string) => {
    const ledger = (await gw.admin('GET', `/admin/accounts/${accountId}/ledger`)).body.data;
    return -ledger.find((row: { kind: string }) => row.kind === 'hold').balance_delta_micros;
  };

  test('a chat call without max_tokens is sent with the max_tokens the balance holds, and held for exactly that', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 600 });
    const res = await post(key, '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: PROMPT }] });
    const answer = (await res.body.json()) as { usage: { prompt_tokens: number; completion_tokens: number }; choices: { finish_reason: string }[] };
    const cap = Number(res.headers[HEADER]);
    const held = await heldMicros(accountId);
    assert.equal(res.statusCode, 200);
    assert.deepEqual((await upstreamBody('chat')).max_tokens, cap);
    // the most the balance holds: this hold, and not one output token more
    assert.ok(held <= 600 && held + OUTPUT_PRICE > 600, `held ${held} of 600 for ${cap} output tokens`);
    assert.deepEqual({ finish: answer.choices[0]?.finish_reason, output: answer.usage.completion_tokens }, { finish: 'length', output: cap });
    assert.equal((await gw.settled(accountId)).balance_micros, 600 - (answer.usage.prompt_tokens * 2 + answer.usage.completion_tokens * OUTPUT_PRICE));
  });

  test('a streamed chat call is lowered the same way, the header on the stream', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 600 });
    const res = await post(key, '/v1/chat/completions', { model: 'sandbox-chat', stream: true, messages: [{ role: 'user', content: PROMPT }] });
    const text = await res.body.text();
    const cap = Number(res.headers[HEADER]);
    assert.equal(res.statusCode, 200);
    assert.match(text, /data: \[DONE\]/);
    assert.equal((await upstreamBody('chat')).max_tokens, cap);
    const held = await heldMicros(accountId);
    assert.ok(held <= 600 && held + OUTPUT_PRICE > 600, `held ${held} of 600 for ${cap} output tokens`);
    assert.equal((await gw.settled(accountId)).held_micros, 0);
  });

  test('a responses call without max_output_tokens is sent with the max_output_tokens the balance holds', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 600 });
    const res = await post(key, '/v1/responses', { model: 'sandbox-chat', input: PROMPT });
    await res.body.dump();
    const cap = Number(res.headers[HEADER]);
    assert.equal(res.statusCode, 200);
    assert.ok(cap > 0);
    assert.equal((await upstreamBody('responses')).max_output_tokens, cap);
    const held = await heldMicros(accountId);
    assert.ok(held <= 600 && held + OUTPUT_PRICE > 600, `held ${held} of 600 for ${cap} output tokens`);
  });

  test('an ample balance sends the body as it came, with no header', async () => {
    const { key } = await gw.account({ creditMicros: 10_000_000 });
    const res = await post(key, '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: PROMPT }] });
    await res.body.dump();
    assert.deepEqual(
      { status: res.statusCode, header: res.headers[HEADER], sent: 'max_tokens' in (await upstreamBody('chat')) },
      { status: 200, header: undefined, sent: false },
    );
  });

  test('a max_tokens the caller named is never lowered: the call is a 402 saying what it needs', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 600 });
    const res = await post(key, '/v1/chat/completions', { model: 'sandbox-chat', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
    const body = (await res.body.json()) as { error: string };
    const needed = Number(/this call needs to hold (\d+) micros; the account has 600 micros available$/.exec(body.error)?.[1]);
    assert.equal(res.statusCode, 402);
    assert.ok(needed > 100 * OUTPUT_PRICE, body.error);
    assert.equal((await gw.balance(accountId)).balance_micros, 600);
  });

  test('a balance that cannot hold the prompt and one output token is a 402 saying the least the call needs', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 50 });
    const res = await post(key, '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: PROMPT }] });
    const body = (await res.body.json()) as { error: string; type: string };
    const needed = Number(/: this call needs to hold at least (\d+) micros; the account has 50 micros available$/.exec(body.error)?.[1]);
    assert.deepEqual({ status: res.statusCode, type: body.type }, { status: 402, type: 'billing_error' });
    // the prompt (100 words, 2 micros a token) and one output token
    assert.ok(needed > 200 + OUTPUT_PRICE && needed < 10 * 200, body.error);
    assert.equal((await gw.balance(accountId)).balance_micros, 50);
    assert.equal((await gw.sandboxControl('GET', '/__sandbox/requests')).data.length, 0);
  });
});
