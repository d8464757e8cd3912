// The account console's webhook secret in a real browser (headless Chromium) against a live
// gateway, end to end: the secret revealed and rotated on Settings, read off the page; a task's
// callback then signed with that new secret (and not with the old one), as a receiver verifies it
// with verifyWebhook; and the delivery shown as delivered under its task on the Tasks page. Any
// console error, uncaught exception, failed request or unannounced error answer fails the test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook } from '../../src/index.js';
import { browserMissing, consoleBrowser, goTo, rotateSecretOnSettings } from '../helpers/browser.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const skip = browserMissing();
if (skip) console.log(`console webhook browser test ${skip}`);

describe('the account console’s webhook secret in a browser', { skip, timeout: 120_000 }, () => {
  const { openPage } = consoleBrowser();
  let gw: TestGateway;
  let receiver: Receiver;

  before(async () => {
    gw = await startTestGateway({ webhooks: { retry_delays_ms: [50, 50, 50] } });
    receiver = await startReceiver();
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  test('a secret rotated on Settings signs the next task callback, which the Tasks page then shows delivered', async () => {
    const { page, watch } = await openPage();
    const { accountId, key } = await gw.account();
    await page.goto((await gw.admin('POST', `/admin/accounts/${accountId}/login-links`)).body.url);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    const { old, rotated } = await rotateSecretOnSettings(page);

    const created = await gw.call(key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'a toll gate at noon', callback_url: receiver.url });
    assert.equal(created.status, 200);
    const taskId = created.body.id as string;
    const delivery = await eventually(() => receiver.deliveries.find((d) => d.payload.task_id === taskId), 15_000);
    assert.equal(verifyWebhook(rotated, delivery.headers, delivery.rawBody), true, 'the secret read off the page verifies the delivery');
    assert.equal(verifyWebhook(old, delivery.headers, delivery.rawBody), false, 'the secret before the rotation does not');

    await goTo(page, 'Tasks', 'Tasks');
    await page.locator('.table[aria-busy="false"]').waitFor();
    await page.getByRole('button', { name: `Webhooks of ${taskId}` }).click();
    const row = page
      .getByRole('table', { name: `Webhook deliveries of ${taskId}` })
      .getByRole('row', { name: new RegExp(String(delivery.headers['x-service-event-id'])) });
    // the list is read again every second while the delivery is pending
    await row.getByRole('cell', { name: 'delivered', exact: true }).waitFor({ timeout: 10_000 });
    assert.match((await row.textContent()) ?? '', /delivered1HTTP 200/);
    assert.equal(receiver.deliveries.filter((d) => d.payload.task_id === taskId).length, 1, 'delivered once');
    assert.deepEqual(watch.problems, []);
  });
});
