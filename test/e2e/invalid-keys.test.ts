// Invalid keys stay off the store: one lookup per key per invalid_key_cache_ms, and an address that
// keeps failing gets 429 (Retry-After) for its unknown keys, while a valid key from the same address
// (a customer behind the guesser's NAT) still authenticates. Every 429 says when to come back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { ADMIN_AUTH, startTestGateway, type TestGateway } from '../helpers/gateway.js';

// Linux answers on all of 127/8: each address here is another client of the gateway on 127.0.0.1.
const clients = new Map<string, Agent>();
const from = (address: string) => {
  if (!clients.has(address)) clients.set(address, new Agent({ localAddress: address }));
  return clients.get(address)!;
};

describe('invalid keys', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ limits: { auth_failures_per_minute: 5 } });
  });
  after(async () => {
    await gw.close();
    await Promise.all([...clients.values()].map((agent) => agent.close()));
  });

  async function models(address: string, key: string) {
    const res = await request(`${gw.url}/v1/models`, { dispatcher: from(address), headers: { authorization: `Bearer ${key}` } });
    const body = await res.body.json();
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], body };
  }
  const lookups = async (result: string) =>
    Number(
      new RegExp(`^tollroute_api_key_lookups_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(
        await (await request(`${gw.url}/metrics`, ADMIN_AUTH)).body.text(),
      )?.[1] ?? 0,
    );

  test('a flood of one invalid key costs one lookup, then the address gets 429 for it while its valid keys still authenticate', async () => {
    const before = await lookups('unknown');
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await models('127.0.0.2', 'tr-not-a-real-key'));
    assert.deepEqual(
      answers.slice(0, 5).map((a) => a.status),
      [401, 401, 401, 401, 401],
    );
    assert.deepEqual(answers[5], {
      status: 429,
      retryAfter: '12', // 5 failures a minute: the next one in 12 s
      body: { error: 'too many failed authentications from this address', type: 'rate_limit_error' },
    });
    assert.ok(answers.slice(5).every((a) => a.status === 429));
    assert.equal((await lookups('unknown')) - before, 1, 'the store saw the invalid key once');

    const { key } = await gw.account();
    assert.equal((await models('127.0.0.3', key)).status, 200, 'another address authenticates');
    assert.equal((await models('127.0.0.2', key)).status, 200, 'a good key from the flooding address is admitted');
    assert.equal((await models('127.0.0.2', 'tr-not-a-real-key')).status, 429, 'and its bad key is still refused');
  });

  test('thirty wrong keys from one address lock out no customer behind it: a valid key the gateway has not seen yet is looked up and admitted', async () => {
    for (let i = 0; i < 30; i++) await models('127.0.0.7', `tr-wrong-${i}`);
    assert.equal((await models('127.0.0.7', 'tr-wrong-once-more')).status, 429);
    const { key } = await gw.account();
    const before = await lookups('found');
    assert.equal((await models('127.0.0.7', key)).status, 200);
    assert.equal((await lookups('found')) - before, 1, 'the valid key came from the store, not from memory');
  });

  test('distinct invalid keys are each looked up, and past the address limit answered 429', async () => {
    const before = await lookups('unknown');
    const statuses = [];
    for (let i = 0; i < 12; i++) statuses.push((await models('127.0.0.4', `tr-guess-${i}`)).status);
    assert.deepEqual(statuses, [...Array(5).fill(401), ...Array(7).fill(429)]);
    assert.equal((await lookups('unknown')) - before, 12);
  });

  test('a key issued after a flood of invalid ones works at once', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await models('127.0.0.5', 'tr-another-bad-key')).status, 401);
    const { key } = await gw.account();
    assert.equal((await models('127.0.0.5', key)).status, 200);
  });

  test('a key past its requests per minute gets 429 with Retry-After in whole seconds', async () => {
    const { key } = await gw.account({ rpm: 2 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await models('127.0.0.6', key));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 429],
    );
    assert.deepEqual(answers[2]!.body, { error: 'rate limit exceeded', type: 'rate_limit_error' });
    const retryAfter = Number(answers[2]!.retryAfter);
    assert.ok(retryAfter >= 29 && retryAfter <= 30, `Retry-After ${answers[2]!.retryAfter}: rpm 2 refills a token in 30 s`);
  });
});
