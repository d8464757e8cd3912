// The account console's webhook secret in a real browser (headless Chromium) against a live
// gateway, end to end: the secret revealed and rotated on Settings, read off the page; a task's
// callback then signed with that new secret (and not with the old one), as a receiver verifies it
// with verifyWebhook; and the delivery shown as delivered under its task on the Tasks page. Any
// console error, uncaught exception, failed request or unannounced error answer fails the test.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { BUILT_CONSOLE_DIR } from '../../src/http/routes/console.js';
import { verifyWebhook } from '../../src/index.js';
import { browserMissing, goTo, launchBrowser, PageWatch, rotateSecretOnSettings, SIZES } from '../helpers/browser.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const skip = browserMissing();
if (skip) console.log(`console webhook browser test ${skip}`);

describe('the account console’s webhook secret in a browser', { skip, timeout: 120_000 }, () => {
  let gw: TestGateway;
  let browser: Browser;
  let receiver: Receiver;
  let context: BrowserContext | undefined;

  before(async () => {
    assert.ok(existsSync(path.join(BUILT_CONSOLE_DIR, 'index.html')), `the console is not built in ${BUILT_CONSOLE_DIR}: run npm run build`);
    gw = await startTestGateway({ webhooks: { retry_delays_ms: [50, 50, 50] } });
    receiver = await startReceiver();
    browser = await launchBrowser();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await gw?.close();
    await receiver?.close();
  });

  test('a secret rotated on Settings signs the next task callback, which the Tasks page then shows delivered', async () => {
    context = await browser.newContext({ viewport: SIZES[0] });
    const page = await context.newPage();
    const watch = new PageWatch(page);
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
