// The account console in a real browser (headless Chromium) against a live gateway: the banner of
// a balance below its low-balance threshold on every signed-in page, none for an account above
// its own, and the threshold set on Settings. Any console error, uncaught exception, failed request
// or unannounced error answer fails the test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserMissing, consoleBrowser, goTo } from '../helpers/browser.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const skip = browserMissing();
if (skip) console.log(`console low-balance browser test ${skip}`);

describe('the console’s low-balance banner in a browser', { skip, timeout: 120_000 }, () => {
  const { openPage } = consoleBrowser();
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw?.close());

  const signIn = async (page: Page, accountId: string) => {
    await page.goto((await gw.admin('POST', `/admin/accounts/${accountId}/login-links`)).body.url);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  };
  const banner = (page: Page) => page.getByRole('status', { name: 'Low balance' });

  test('an account below its threshold sees the banner on every page', async () => {
    const { page, watch } = await openPage();
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 5_000_000 });
    await signIn(page, accountId);
    await banner(page).waitFor();
    assert.match((await banner(page).textContent()) ?? '', /3\.00 available, below the threshold of 5\.00/);
    await goTo(page, 'Keys', 'API keys');
    await banner(page).waitFor();
    assert.deepEqual(watch.problems, []);
  });

  test('an account at or above its threshold sees no banner', async () => {
    const { page, watch } = await openPage();
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    await gw.call(key, 'PATCH', '/v1/account/settings', { low_balance_micros: 3_000_000 });
    await signIn(page, accountId);
    await goTo(page, 'Settings', 'Settings');
    await page.getByRole('textbox', { name: 'Threshold' }).waitFor();
    // Every read of the page has answered, the banner's included.
    await page.waitForLoadState('networkidle');
    assert.equal(await banner(page).count(), 0);
    assert.deepEqual(watch.problems, []);
  });

  test('a threshold saved on Settings above the balance brings the banner on the next page', async () => {
    const { page, watch } = await openPage();
    const { accountId, key } = await gw.account({ creditMicros: 3_000_000 });
    await signIn(page, accountId);
    await goTo(page, 'Settings', 'Settings');
    await page.getByRole('textbox', { name: 'Threshold' }).fill('4.5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    assert.equal((await gw.call(key, 'GET', '/v1/account/settings')).body.low_balance_micros, 4_500_000);
    await goTo(page, 'Overview', 'Overview');
    await banner(page).waitFor();
    assert.deepEqual(watch.problems, []);
  });
});
