// Paying by card from the console's Top-ups page in a real browser (headless Chromium), against a
// gateway configured with a local fake of Stripe's API: the amount typed becomes a Checkout Session
// for exactly that many cents, and the browser lands on the session's url. A gateway that takes no
// cards shows no card form. Any console error, uncaught exception, failed request or unannounced
// error answer fails the test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserMissing, consoleBrowser, goTo } from '../helpers/browser.js';
import { type FakeStripe, startFakeStripe, stripeConfigFor } from '../helpers/fake-stripe.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const skip = browserMissing();
if (skip) console.log(`console card top-up browser test ${skip}`);

describe('paying by card on the console’s Top-ups page', { skip, timeout: 120_000 }, () => {
  const { openPage } = consoleBrowser();
  let fake: FakeStripe;
  let gw: TestGateway;
  let plain: TestGateway;
  before(async () => {
    fake = await startFakeStripe();
    gw = await startTestGateway({ stripe: stripeConfigFor(fake) });
    plain = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
    await plain?.close();
    await fake?.close();
  });

  async function topUpsPage(gateway: TestGateway) {
    const { page, watch } = await openPage();
    const { accountId } = await gateway.account({ creditMicros: 1_000_000 });
    await page.goto((await gateway.admin('POST', `/admin/accounts/${accountId}/login-links`)).body.url);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const options = page.waitForResponse((response) => response.url().endsWith('/v1/account/card-payments/options'));
    await goTo(page, 'Top-ups', 'Top-ups');
    return { page, watch, accountId, options };
  }

  test('an amount typed and paid opens the Checkout Session the gateway created for it, in cents', async () => {
    const { page, watch, accountId } = await topUpsPage(gw);
    await page.getByRole('textbox', { name: 'Amount to add' }).fill('12.50');
    await page.getByTestId('card-price').filter({ hasText: 'You pay 12.50 USD.' }).waitFor();
    await page.getByRole('button', { name: 'Pay by card' }).click();
    await page.waitForURL(`${fake.url}/pay/**`);
    const id = new URL(page.url()).pathname.slice('/pay/'.length);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), `Pay ${id}`);
    const sent = fake.sent.at(-1)!.form;
    assert.deepEqual([sent['line_items[0][price_data][unit_amount]'], sent.client_reference_id], ['1250', accountId]);
    assert.equal((await gw.balance(accountId)).balance_micros, 1_000_000, 'nothing credited before Stripe confirms');
    assert.deepEqual(watch.problems, []);
  });

  test('an amount below the minimum is refused on the page, and no session is made', async () => {
    const { page, watch } = await topUpsPage(gw);
    const before = fake.sent.length;
    await page.getByRole('textbox', { name: 'Amount to add' }).fill('0.50');
    await page.getByRole('button', { name: 'Pay by card' }).click();
    await page.getByRole('alert').filter({ hasText: 'The least you can add is 1.00.' }).waitFor();
    assert.equal(fake.sent.length, before);
    assert.deepEqual(watch.problems, []);
  });

  test('a gateway that takes no cards shows no card form', async () => {
    const { page, watch, options } = await topUpsPage(plain);
    assert.equal(((await (await options).json()) as { enabled: boolean }).enabled, false);
    // The answer is in: one frame later the page has rendered what it says.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
    await page.getByRole('heading', { level: 1, name: 'Top-ups' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Pay by card' }).count(), 0);
    assert.deepEqual(watch.problems, []);
  });
});
