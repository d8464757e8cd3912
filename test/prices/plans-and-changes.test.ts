// Price plans and price changes on a live gateway: who pays what, from when, and that a call or a
// task keeps the prices it started with.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { multiplied } from '../../src/billing/price-book.js';
import { priceMicros, type Units } from '../../src/billing/prices.js';
import type { Price } from '../../src/config/schema.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const BASE: Price = { input_token: 2_000_000, output_token: 8_000_000 };

describe('price plans and price changes', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({
      models: {
        'plan-chat': { type: 'chat', channel: 'sandbox-openai', upstream_model: 'sandbox-chat', price: BASE },
        'plan-claude': { type: 'chat', channel: 'sandbox-anthropic', upstream_model: 'sandbox-claude', price: BASE },
        'plan-video': { type: 'video', channel: 'sandbox-ark', upstream_model: 'sandbox-video', price: { second: 100_000 } },
        'plan-tts': { type: 'tts', channel: 'sandbox-speech', upstream_model: 'sandbox-tts', price: { character: 100, call: 3 } },
      },
    });
  });
  after(() => gw.close());

  /** One chat call and its usage row: units and amount. */
  async function chat(key: string, model = 'plan-chat', content = 'hello there') {
    const answer = await gw.call(key, 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content }] });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return lastUsage(key);
  }
  async function lastUsage(key: string): Promise<{ units: Units; amount_micros: number }> {
    const usage = await eventually(async () => (await gw.call(key, 'GET', '/v1/account/usage?limit=1')).body.data?.[0]);
    return usage;
  }

  test('a plan multiplies every price of the account’s calls; another account pays the model’s own', async () => {
    assert.equal((await gw.admin('POST', '/admin/plans', { name: 'eighty', multiplier: '0.8' })).status, 200);
    const onPlan = await gw.account();
    const other = await gw.account();
    assert.equal((await gw.admin('PUT', `/admin/accounts/${onPlan.accountId}/plan`, { plan: 'eighty' })).status, 200);
    const planned = await chat(onPlan.key);
    const plain = await chat(other.key);
    assert.equal(planned.amount_micros, priceMicros(planned.units, { input_token: 1_600_000, output_token: 6_400_000 }));
    assert.equal(plain.amount_micros, priceMicros(plain.units, BASE));
    assert.equal((await gw.settled(onPlan.accountId)).balance_micros, 10_000_000 - planned.amount_micros);
  });

  test('a per-model multiplier and a plan’s own prices take the place of the plan’s multiplier', async () => {
    const own: Price = { input_token: 1_000_000, output_token: 1_000_000 };
    const put = await gw.admin('POST', '/admin/plans', { name: 'mixed', multiplier: 2, models: { 'plan-chat': '0.5' }, prices: { 'plan-claude': own } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual([put.body.multiplier, put.body.models], ['2', { 'plan-chat': '0.5' }]);
    const account = await gw.account();
    await gw.admin('PUT', `/admin/accounts/${account.accountId}/plan`, { plan: 'mixed' });
    const halved = await chat(account.key, 'plan-chat');
    assert.equal(halved.amount_micros, priceMicros(halved.units, { input_token: 1_000_000, output_token: 4_000_000 }));
    const listed = await chat(account.key, 'plan-claude');
    assert.equal(listed.amount_micros, priceMicros(listed.units, own));
  });

  test('a plan applies from the moment it is assigned: the call before pays the model’s prices', async () => {
    await gw.admin('POST', '/admin/plans', { name: 'half', multiplier: '0.5' });
    const account = await gw.account();
    const before = await chat(account.key);
    await gw.admin('PUT', `/admin/accounts/${account.accountId}/plan`, { plan: 'half' });
    const afterAssign = await chat(account.key);
    await gw.admin('PUT', `/admin/accounts/${account.accountId}/plan`, { plan: null });
    const afterRemoval = await chat(account.key);
    assert.equal(before.amount_micros, priceMicros(before.units, BASE));
    assert.equal(afterAssign.amount_micros, priceMicros(afterAssign.units, multiplied(BASE, 500_000)));
    assert.equal(afterRemoval.amount_micros, priceMicros(afterRemoval.units, BASE));
  });

  test('a price change applies from its effective time, not before, and its history is kept', async () => {
    const account = await gw.account();
    const next: Price = { input_token: 3_000_000, output_token: 9_000_000 };
    const effectiveAt = Date.now() + 1_500;
    const change = await gw.admin('POST', '/admin/price-changes', {
      model: 'plan-claude',
      price: next,
      effective_at: new Date(effectiveAt).toISOString(),
      note: 'list',
    });
    assert.equal(change.status, 201, JSON.stringify(change.body));
    const early = await chat(account.key, 'plan-claude');
    assert.equal(early.amount_micros, priceMicros(early.units, BASE));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, effectiveAt - Date.now()) + 50));
    const late = await chat(account.key, 'plan-claude');
    assert.equal(late.amount_micros, priceMicros(late.units, next));
    const history = await gw.admin('GET', '/admin/price-changes?model=plan-claude');
    assert.deepEqual(
      history.body.data.map((c: { price: Price; note: string }) => [c.price, c.note]),
      [[next, 'list']],
    );
  });

  test('a stream in flight when its model’s price changes is billed at the prices it started with', async () => {
    const account = await gw.account();
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', chunk_delay_ms: 40, times: 1 });
    const stream = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'plan-chat', stream: true, messages: [{ role: 'user', content: '[[words:20]]' }] }),
    }).then((res) => res.text());
    await new Promise((resolve) => setTimeout(resolve, 150));
    const changed = await gw.admin('POST', '/admin/price-changes', { model: 'plan-chat', price: { input_token: 50_000_000, output_token: 50_000_000 } });
    assert.equal(changed.status, 201);
    assert.match(await stream, /\[DONE\]/);
    const billed = await lastUsage(account.key);
    assert.equal(billed.amount_micros, priceMicros(billed.units, BASE));
    // and the next call pays the new prices
    const next = await chat(account.key);
    assert.equal(next.amount_micros, priceMicros(next.units, { input_token: 50_000_000, output_token: 50_000_000 }));
  });

  test('a task settles at the prices of its submission, whatever changed before it ended', async () => {
    const account = await gw.account({ creditMicros: 20_000_000 });
    const task = await gw.call(account.key, 'POST', '/v1/videos/generations', {
      model: 'plan-video',
      content: [{ type: 'text', text: 'a gate --duration 5' }],
    });
    assert.equal(task.status, 200, JSON.stringify(task.body));
    await gw.admin('POST', '/admin/price-changes', { model: 'plan-video', price: { second: 900_000 } });
    await eventually(async () => (await gw.call(account.key, 'GET', `/v1/videos/generations/${task.body.id}`)).body.status === 'succeeded', 10_000);
    const billed = await lastUsage(account.key);
    assert.ok((billed.units.second ?? 0) > 0);
    assert.equal(billed.amount_micros, priceMicros(billed.units, { second: 100_000 }));
  });

  test('GET /v1/models shows each model’s prices for the caller’s plan, as exact decimals', async () => {
    await gw.admin('POST', '/admin/plans', { name: 'quarter', multiplier: '0.25' });
    const account = await gw.account();
    await gw.admin('PUT', `/admin/accounts/${account.accountId}/plan`, { plan: 'quarter' });
    const models = await gw.call(account.key, 'GET', '/v1/models');
    const tts = models.body.data.find((m: { id: string }) => m.id === 'plan-tts');
    assert.deepEqual(tts.pricing, { request: '0.000001', character: '0.000025' });
    const plain = await gw.account();
    const seen = await gw.call(plain.key, 'GET', '/v1/models/plan-tts');
    assert.deepEqual(seen.body.pricing, { request: '0.000003', character: '0.0001' });
  });

  test('a plan that is not a decimal, names an unknown model, or is in use cannot be set or deleted', async () => {
    const bad = await gw.admin('POST', '/admin/plans', { name: 'bad', multiplier: '1e3' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /^multiplier:/);
    const unknown = await gw.admin('POST', '/admin/plans', { name: 'bad', models: { 'no-such-model': '0.5' } });
    assert.match(unknown.body.error, /^models\.no-such-model:/);
    await gw.admin('POST', '/admin/plans', { name: 'kept', multiplier: '0.9' });
    const account = await gw.account();
    await gw.admin('PUT', `/admin/accounts/${account.accountId}/plan`, { plan: 'kept' });
    assert.equal((await gw.admin('DELETE', '/admin/plans/kept')).status, 409);
    assert.equal((await gw.admin('PUT', `/admin/accounts/${account.accountId}/plan`, { plan: 'no-such-plan' })).status, 404);
    const badPrice = await gw.admin('POST', '/admin/price-changes', {
      model: 'plan-chat',
      price: {
        input_token: 1,
        tiers: [
          { above_input_tokens: 9, input_token: 2 },
          { above_input_tokens: 3, input_token: 3 },
        ],
      },
    });
    assert.equal(badPrice.status, 400);
    assert.match(badPrice.body.error, /^price\.tiers\.1\.above_input_tokens:/);
  });
});
