// The console's operator view (/dashboard/admin) in a real browser (headless Chromium) against a
// live gateway: the admin token (a wrong one refused in words), the accounts list and its search,
// a credit typed in units landing as exact micros, a key issued and revoked (then refused on a
// metered call), a sign-in link issued and used to open the account console, and the channels.
// Any console error, uncaught exception, failed request or unannounced error answer fails the test.
// Pages are photographed at 1280×800 and 390×844, kept in TOLLROUTE_SCREENSHOT_DIR when it is set.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { formatMicros } from '../../console/src/money.js';
import { TOKEN_REFUSED } from '../../console/src/pages/admin/messages.js';
import { browserMissing, consoleBrowser } from '../helpers/browser.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b c' }] };

const skip = browserMissing();
if (skip) console.log(`operator browser test ${skip}`);

describe('the operator view in a browser', { skip, timeout: 180_000 }, () => {
  const { openPage, photograph } = consoleBrowser();
  let gw: TestGateway;
  let alpha: { id: string };
  let keyOfAlpha: string;

  before(async () => {
    gw = await startTestGateway();
    alpha = (await gw.admin('POST', '/admin/accounts', { name: 'Alpha Rockets', credit_micros: 5_000_000 })).body;
    keyOfAlpha = (await gw.admin('POST', `/admin/accounts/${alpha.id}/keys`, { name: 'production', rpm: 120 })).body.key;
    await gw.admin('POST', '/admin/accounts', { name: 'Beta Freight', credit_micros: 250_000 });
  });
  after(async () => gw?.close());

  async function signInAsOperator(page: Page): Promise<void> {
    await page.goto(`${gw.url}/dashboard/admin`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
  }

  async function openAlpha(page: Page): Promise<void> {
    await signInAsOperator(page);
    await page.getByRole('button', { name: `Open account Alpha Rockets (${alpha.id})` }).click();
    await page.getByRole('heading', { level: 1, name: 'Alpha Rockets' }).waitFor();
  }

  test('a wrong admin token is refused with a message saying so', async () => {
    const { page, watch } = await openPage();
    await page.goto(`${gw.url}/dashboard/admin`);
    await page.getByRole('heading', { level: 1, name: 'Operator sign-in' }).waitFor();
    await photograph(page, 'operator-sign-in');
    watch.expect(401, '/admin/channels');
    await page.getByLabel('Admin token').fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Open the operator view' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal((await page.getByRole('alert').textContent())?.trim(), TOKEN_REFUSED);
    assert.deepEqual(watch.problems, []);
  });

  test('the admin token opens the accounts list, and a search narrows it by name', async () => {
    const { page, watch } = await openPage();
    await signInAsOperator(page);
    const rows = page.locator('tbody tr');
    // The heading shows before the list has loaded: wait for the rows, then read them.
    await rows.filter({ hasText: 'Alpha Rockets' }).waitFor();
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector('td')?.textContent)), ['Beta Freight', 'Alpha Rockets']);
    await photograph(page, 'operator-accounts');

    await page.getByLabel('Search by name').fill('rocket');
    await page.getByLabel('Search by name').press('Enter');
    await page.locator('tbody tr').filter({ hasText: 'Beta Freight' }).waitFor({ state: 'detached' });
    assert.equal(await rows.count(), 1);
    assert.match((await rows.first().textContent()) ?? '', /^Alpha Rockets5\.00/);
    assert.deepEqual(watch.problems, []);
  });

  test('a credit typed in units adds exactly that many micros to the balance', async () => {
    const { page, watch } = await openPage();
    await openAlpha(page);
    const before = (await gw.balance(alpha.id)).balance_micros;
    await page.getByLabel('Amount (units)').fill('0.300001');
    await page.getByLabel('Note (kept on the ledger)').fill('from the operator view');
    await page.getByLabel('Amount (units)').press('Enter');
    await page.getByRole('status').filter({ hasText: 'Credited 0.300001.' }).waitFor();
    assert.equal((await gw.balance(alpha.id)).balance_micros, before + 300_001);
    await page
      .getByTestId('admin-balance')
      .filter({ hasText: formatMicros(before + 300_001) })
      .waitFor();
    const [row] = (await gw.admin('GET', `/admin/accounts/${alpha.id}/ledger?limit=1`)).body.data;
    assert.deepEqual([row.amount_micros, row.note], [300_001, 'from the operator view']);
    await photograph(page, 'operator-account');
    assert.deepEqual(watch.problems, []);
  });

  test('a key issued in the operator view calls the gateway, and once revoked is refused', async () => {
    const { page, watch } = await openPage();
    await openAlpha(page);
    await page.getByLabel('Key name').fill('issued by the operator');
    await page.getByRole('button', { name: 'Issue key' }).click();
    const key = await page.getByRole('textbox', { name: 'Issued API key' }).inputValue();
    assert.match(key, /^tr-/);
    assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    const row = page.getByRole('row', { name: /issued by the operator/ });
    await row.waitFor();
    await photograph(page, 'operator-key-issued');

    await row.getByRole('button', { name: /^Revoke key/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText(/^revoked /).waitFor();
    assert.equal((await gw.call(key, 'POST', '/v1/chat/completions', CHAT)).status, 401);
    assert.deepEqual(watch.problems, []);
  });

  test('a sign-in link issued in the operator view signs its holder into the account console', async () => {
    const { page, watch } = await openPage();
    await openAlpha(page);
    await page.getByRole('button', { name: 'Issue a sign-in link' }).click();
    const link = await page.getByRole('textbox', { name: 'Sign-in link' }).inputValue();
    assert.match(link, /\/dashboard\/login#token=/);
    await page.getByRole('table', { name: 'Sign-in links of this account' }).getByRole('cell', { name: 'unused', exact: true }).waitFor();
    await photograph(page, 'operator-link-issued');

    const holder = await openPage();
    await holder.page.goto(link);
    await holder.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(await holder.page.locator('header .who span').textContent(), 'Alpha Rockets');
    const [listed] = (await gw.admin('GET', `/admin/accounts/${alpha.id}/login-links`)).body.data;
    assert.equal(listed.state, 'used');
    assert.deepEqual([...watch.problems, ...holder.watch.problems], []);
  });

  async function openChannels(page: Page) {
    await signInAsOperator(page);
    await page.getByRole('navigation', { name: 'Operator' }).getByRole('button', { name: 'Channels' }).click();
    const table = page.getByRole('table', { name: 'Configured channels' });
    await table.waitFor();
    return table;
  }

  test('the channels table lists every configured channel with its state, pool, figures and keys', async () => {
    const { page, watch } = await openPage();
    assert.equal((await gw.call(keyOfAlpha, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    const table = await openChannels(page);
    const configured = (await gw.admin('GET', '/admin/channels')).body.data.map((c: { name: string }) => c.name);
    // Each row is headed by its channel's name, then its kind and origin.
    const names = await table.getByRole('rowheader').evaluateAll((ths) => ths.map((th) => th.firstChild?.textContent));
    assert.deepEqual(names, configured);
    const row = table.locator('tr[data-channel="sandbox-openai"]');
    const shown = (await row.textContent()) ?? '';
    assert.match(shown, new RegExp(`^sandbox-openaiopenai · ${new URL(gw.sandbox.url).origin}closed\\s*Disable`));
    assert.match(shown, /0 \/ 4096/);
    assert.match(shown, /\d+ \/ \d+ ms/, 'latency p50 / p99');
    assert.match(shown, /0\.0%/, 'no attempt failed');
    const fingerprint = createHash('sha256').update('sk-sandbox').digest('hex').slice(0, 8);
    assert.match(
      (await row.getByRole('list', { name: 'Keys of sandbox-openai' }).textContent()) ?? '',
      new RegExp(`^${fingerprint}\\s*closed \\d+ attempts?, 0\\.0% failed$`),
    );
    await photograph(page, 'operator-channels');
    assert.deepEqual(watch.problems, []);
  });

  test('a channel disabled from the Channels page takes no calls, and enabled there takes them again', async () => {
    const { page, watch } = await openPage();
    const table = await openChannels(page);
    const name = 'sandbox-openai-noresponses';
    // sandbox-chat-noresponses is served by this channel alone.
    const chat = async () => (await gw.call(keyOfAlpha, 'POST', '/v1/chat/completions', { ...CHAT, model: 'sandbox-chat-noresponses' })).status;
    const row = table.locator(`tr[data-channel="${name}"]`);
    const state = (word: string) => row.getByRole('cell', { name: word, exact: true });
    await state('closed').waitFor();

    // Escape cancels: nothing is disabled.
    await row.getByRole('button', { name: `Disable channel ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Disable this channel?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await chat(), 200);

    await row.getByRole('button', { name: `Disable channel ${name}` }).press('Enter');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Disable channel' }).click();
    await state('disabled').waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: `Channel ${name} disabled.` })
      .waitFor();
    assert.equal(await chat(), 502);
    await photograph(page, 'operator-channel-disabled');

    await row.getByRole('button', { name: `Enable channel ${name}` }).press('Enter');
    await state('closed').waitFor();
    assert.equal(await chat(), 200);
    assert.deepEqual(watch.problems, []);
  });
});
