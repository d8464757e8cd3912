// The console's Top-ups page in a real browser (headless Chromium) against a live gateway: a code
// redeemed there credits the account once, the balance and the list of top-ups change on the page,
// and a second try of the same code is refused in the API's words. Any console error, uncaught
// exception, failed request or unannounced error answer fails the test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserMissing, consoleBrowser, goTo } from '../helpers/browser.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { makeBatch } from '../topups/redemption-helpers.js';

const skip = browserMissing();
if (skip) console.log(`console top-ups browser test ${skip}`);

describe('the console’s Top-ups page in a browser', { skip, timeout: 120_000 }, () => {
  const { openPage, photograph } = consoleBrowser();
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw?.close());

  test('a code redeemed on the page raises the balance shown and adds its row to the list, once', async () => {
    const { page, watch } = await openPage();
    const { accountId } = await gw.account({ creditMicros: 1_000_000 });
    const batch = await makeBatch(gw, { amount_micros: 2_500_000, count: 1, name: 'welcome' });
    await page.goto((await gw.admin('POST', `/admin/accounts/${accountId}/login-links`)).body.url);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await goTo(page, 'Top-ups', 'Top-ups');

    const balance = page.getByTestId('balance');
    await page.waitForFunction(() => document.querySelector('[data-testid="balance"]')?.textContent === '1.00');
    const rows = page.getByRole('table', { name: 'Top-ups' }).getByRole('row');
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2, 'a header and the opening credit');

    await page.getByRole('textbox', { name: 'Redemption code' }).fill(batch.codes[0]!);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('status').filter({ hasText: 'Credited 2.50. Balance now 3.50.' }).waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid="balance"]')?.textContent === '3.50');
    assert.equal(await balance.textContent(), '3.50');
    const newest = page.getByRole('table', { name: 'Top-ups' }).getByRole('row').nth(1);
    await newest.getByRole('cell', { name: `redemption code batch ${batch.id}` }).waitFor();
    assert.match((await newest.textContent()) ?? '', /2\.50$/);
    assert.equal((await gw.balance(accountId)).balance_micros, 3_500_000);
    await photograph(page, 'topups');

    watch.expect(409, '/v1/account/redemptions');
    await page.getByRole('textbox', { name: 'Redemption code' }).fill(batch.codes[0]!);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('alert').filter({ hasText: 'code: this code has already been redeemed' }).waitFor();
    assert.equal((await gw.balance(accountId)).balance_micros, 3_500_000);
    assert.deepEqual(watch.problems, []);
  });

  test('the CSV link downloads every top-up of the account', async () => {
    const { page, watch } = await openPage();
    const { accountId } = await gw.account({ creditMicros: 4_000_000 });
    await page.goto((await gw.admin('POST', `/admin/accounts/${accountId}/login-links`)).body.url);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await goTo(page, 'Top-ups', 'Top-ups');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /Download CSV/ }).click()]);
    const text = await new Response((await download.createReadStream()) as unknown as ReadableStream).text();
    const lines = text.split('\r\n');
    assert.equal(lines[0], 'id,created_at,kind,amount_micros,description');
    assert.match(lines[1]!, /^\d+,[^,]+,credit,4000000,operator credit$/);
    assert.equal(lines.length, 3, 'one row and the final line end');
    assert.deepEqual(watch.problems, []);
  });
});
