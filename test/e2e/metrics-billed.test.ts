// The billed total in /metrics counts every charge: calls and tasks (images, videos, minutes) alike,
// so per model it equals the usage rows' amounts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { ADMIN_TOKEN, eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway();
});
after(() => gw.close());

const billedTotal = async (model: string) => {
  const text = await (await request(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body.text();
  return Number(new RegExp(`^tollroute_billed_micros_total\\{model="${model}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
};
const finished = (key: string, path: string) =>
  eventually(async () => {
    const { body } = await gw.call(key, 'GET', path);
    return ['succeeded', 'failed'].includes(body.status) && body;
  });

test('image, video and minutes charges are in the billed total, as chat charges are', async () => {
  const { accountId, key } = await gw.account({ creditMicros: 100_000_000 });
  assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] })).status, 200);
  const image = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'a toll gate', n: 2 });
  const video = await gw.call(key, 'POST', '/v1/videos/generations', { model: 'sandbox-video', content: [{ type: 'text', text: 'a road' }], duration: 3 });
  const minutes = await gw.call(key, 'POST', '/v1/audio/minutes', {
    model: 'vendor-minutes',
    file_url: 'https://media.example.com/meeting.mp3?duration_s=40',
    all_activate: true,
  });
  for (const path of [`/v1/images/async/${image.body.id}`, `/v1/videos/generations/${video.body.id}`, `/v1/audio/minutes/${minutes.body.id}`]) {
    assert.equal((await finished(key, path)).status, 'succeeded', path);
  }
  await gw.settled(accountId);
  const usage: { model: string; amount_micros: number }[] = (await gw.admin('GET', `/admin/accounts/${accountId}/usage`)).body.data;
  const models = ['sandbox-chat', 'sandbox-image', 'sandbox-video', 'vendor-minutes'];
  const charged = Object.fromEntries(models.map((m) => [m, usage.filter((u) => u.model === m).reduce((sum, u) => sum + u.amount_micros, 0)]));
  const billed = Object.fromEntries(await Promise.all(models.map(async (m) => [m, await billedTotal(m)])));
  assert.ok(
    models.every((m) => (charged[m] ?? 0) > 0),
    JSON.stringify(charged),
  );
  assert.deepEqual(billed, charged);
});
