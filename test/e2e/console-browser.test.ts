// The account console in a real browser (headless Chromium) against a live gateway: signing in by
// link and by pasted key, the refusal of a used link, every page, creating and revoking a key (the
// revoked key then refused on a metered call), rotating the webhook secret, redelivering a dropped
// webhook delivery from the Tasks page, sending a test event from Settings, the CSV download and
// signing out. Any console error, uncaught exception, failed request or unannounced error answer
// fails the test. Each page is photographed at 1280×800 and 390×844; the pictures are kept in
// TOLLROUTE_SCREENSHOT_DIR when set (docs/screenshots for the README), else in a temporary folder.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { formatMicros } from '../../console/src/money.js';
import { USAGE_CSV_HEADER } from '../../src/account/views.js';
import { SIGN_IN_REFUSED } from '../../src/console/sign-in.js';
import { verifyWebhook } from '../../src/index.js';
import { browserMissing, consoleBrowser, goTo, rotateSecretOnSettings } from '../helpers/browser.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b c' }] };

const skip = browserMissing();
if (skip) console.log(`console browser test ${skip}`);

describe('the account console in a browser', { skip, timeout: 180_000 }, () => {
  const { openPage, photograph } = consoleBrowser({ acceptDownloads: true });
  let gw: TestGateway;
  let account: { accountId: string; key: string; keyId: string };
  let receiver: Receiver;

  before(async () => {
    // short retry delays, so a callback refused on every attempt is dropped within the test
    gw = await startTestGateway({ webhooks: { retry_delays_ms: [50, 50, 50] } });
    receiver = await startReceiver();
    account = await gw.account({ creditMicros: 25_000_000 });
    for (let i = 0; i < 3; i++) assert.equal((await gw.call(account.key, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    await gw.settled(account.accountId);
  });
  after(async () => {
    await gw?.close();
    await receiver?.close();
  });

  /** The paged table holds the answer to the page and filter shown (it is aria-busy while loading). */
  const tableLoaded = (page: Page) => page.locator('.table[aria-busy="false"]').waitFor();
  const loginLink = async () => (await gw.admin('POST', `/admin/accounts/${account.accountId}/login-links`)).body.url as string;
  const alertText = async (page: Page) => (await page.getByRole('alert').first().textContent())?.trim();

  test('a sign-in link signs in, and every page shows the account', async () => {
    const { page, watch } = await openPage();
    await page.goto(await loginLink());
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard/');
    assert.equal(new URL(page.url()).hash, '', 'the token is taken out of the address');

    const { balance_micros: balance } = await gw.balance(account.accountId);
    assert.equal(await page.getByTestId('balance').textContent(), formatMicros(balance));
    assert.equal(await page.getByTestId('held').textContent(), '0.00');
    const byModel = page.getByRole('row', { name: /sandbox-chat/ });
    assert.match((await byModel.textContent()) ?? '', /^sandbox-chat3/);
    await photograph(page, 'overview');

    await goTo(page, 'Keys', 'API keys');
    await page.locator(`tr[data-key-id="${account.keyId}"]`).waitFor();
    await photograph(page, 'keys');

    await goTo(page, 'Usage', 'Usage');
    await tableLoaded(page);
    assert.equal(await page.locator('tbody tr').count(), 3);
    await photograph(page, 'usage');

    await goTo(page, 'Settings', 'Settings');
    await photograph(page, 'settings');

    // A reload keeps the page: the gateway answers every /dashboard path with the console.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    assert.deepEqual(watch.problems, []);
  });

  test('a link already used says so', async () => {
    const { page, watch } = await openPage();
    const link = await loginLink();
    assert.equal((await gw.call('', 'POST', '/v1/account/session', { login_token: new URL(link).hash.slice('#token='.length) })).status, 200);
    watch.expect(401, '/v1/account/session');
    await page.goto(link);
    await page.getByRole('alert').waitFor();
    assert.equal(await alertText(page), SIGN_IN_REFUSED.linkUsed);
    assert.deepEqual(watch.problems, []);
  });

  test('a pasted API key signs in; a wrong one is refused in the API’s words', async () => {
    const { page, watch } = await openPage();
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByLabel('API key').waitFor();
    await photograph(page, 'sign-in');

    watch.expect(401, '/v1/account/session');
    await page.getByLabel('API key').fill('tr-not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await alertText(page), SIGN_IN_REFUSED.keyUnknown);

    // Keyboard only: type the key and press Enter.
    await page.getByLabel('API key').fill(account.key);
    await page.getByLabel('API key').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.deepEqual(watch.problems, []);
  });

  test('a key created on the Keys page is shown once and listed; revoked, it is refused', async () => {
    const { page, watch } = await openPage();
    await page.goto(await loginLink());
    await goTo(page, 'Keys', 'API keys');

    await page.getByLabel('Name of a new key').fill('from the console');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByRole('textbox', { name: 'New API key' }).inputValue();
    assert.match(secret, /^tr-/);
    assert.equal((await gw.call(secret, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    const row = page.getByRole('row', { name: /from the console/ });
    await row.waitFor();
    await photograph(page, 'keys-created');

    // Escape cancels, and nothing is revoked.
    await row.getByRole('button', { name: /^Revoke key/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal((await gw.call(secret, 'POST', '/v1/chat/completions', CHAT)).status, 200);

    await row.getByRole('button', { name: /^Revoke key/ }).click();
    await dialog.waitFor();
    await photograph(page, 'keys-revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText(/^revoked /).waitFor();
    assert.equal((await gw.call(secret, 'POST', '/v1/chat/completions', CHAT)).status, 401);
    assert.deepEqual(watch.problems, []);
  });

  test('the webhook secret is hidden until revealed, and rotating it gives a new one', async () => {
    const { page, watch } = await openPage();
    await page.goto(await loginLink());
    const { rotated } = await rotateSecretOnSettings(page);
    assert.equal((await gw.call(account.key, 'GET', '/v1/account/webhook-secret')).body.secret, rotated);
    assert.deepEqual(watch.problems, []);
  });

  test('the CSV link downloads the filtered usage as CSV', async () => {
    const { page, watch } = await openPage();
    await page.goto(await loginLink());
    await goTo(page, 'Usage', 'Usage');
    await page.getByLabel('Model').fill('sandbox-chat');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await tableLoaded(page);
    const link = page.getByRole('link', { name: /Download CSV/ });
    assert.match((await link.getAttribute('href')) ?? '', /[?&]model=sandbox-chat(&|$)/);

    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    assert.equal(download.suggestedFilename(), 'usage.csv');
    const csv = readFileSync(await download.path(), 'utf8');
    assert.ok(csv.startsWith(USAGE_CSV_HEADER), csv.slice(0, 200));
    // Three calls before, and the one the Keys test made with its own key.
    const lines = csv.split('\r\n').filter((line) => line !== '');
    assert.equal(lines.length, 1 + (await gw.call(account.key, 'GET', '/v1/account/usage')).body.data.length);
    assert.deepEqual(watch.problems, []);
  });

  test('the usage table pages back and forth, 50 rows a page', async () => {
    const { page, watch } = await openPage();
    const busy = await gw.account();
    for (let round = 0; round < 6; round++) {
      const calls = Array.from({ length: 10 }, () => gw.call(busy.key, 'POST', '/v1/chat/completions', CHAT));
      for (const call of await Promise.all(calls)) assert.equal(call.status, 200);
    }
    const link = (await gw.admin('POST', `/admin/accounts/${busy.accountId}/login-links`)).body.url as string;
    await page.goto(link);
    await goTo(page, 'Usage', 'Usage');
    await tableLoaded(page);
    const rows = page.locator('tbody tr');
    const older = page.getByRole('button', { name: 'Older' });
    const newer = page.getByRole('button', { name: 'Newer' });
    assert.equal(await rows.count(), 50);
    assert.ok(await newer.isDisabled());
    const first = await rows.first().textContent();
    // The table says it is busy while the next page loads; its buttons wait for it.
    await older.click();
    await page.getByText('Page 2').waitFor();
    await tableLoaded(page);
    assert.equal(await rows.count(), 10);
    assert.ok(await older.isDisabled());
    await newer.click();
    await page.getByText('Page 1').waitFor();
    await tableLoaded(page);
    assert.equal(await rows.first().textContent(), first);
    assert.deepEqual(watch.problems, []);
  });

  test('the Tasks page lists the account’s tasks and filters them by status', async () => {
    const { page, watch } = await openPage();
    const owner = await gw.account();
    // One of the two fails: the sandbox fails the next task outcome it reports, whichever task asks.
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'images', task_outcome: 'failed', times: 1 });
    const made = await Promise.all(
      ['a toll gate at dawn', 'a toll gate at dusk'].map((prompt) => gw.call(owner.key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt })),
    );
    assert.deepEqual(
      made.map((task) => task.status),
      [200, 200],
    );
    await eventually(async () => {
      const { body } = await gw.call(owner.key, 'GET', '/v1/account/tasks');
      return body.data.every((task: { status: string }) => task.status === 'succeeded' || task.status === 'failed') && body;
    }, 15_000);

    await page.goto((await gw.admin('POST', `/admin/accounts/${owner.accountId}/login-links`)).body.url);
    await goTo(page, 'Tasks', 'Tasks');
    await tableLoaded(page);
    assert.equal(await page.locator('tbody tr').count(), 2);
    await photograph(page, 'tasks');

    await page.getByLabel('Status').selectOption('failed');
    await tableLoaded(page);
    const rows = page.locator('tbody tr');
    assert.equal(await rows.count(), 1);
    const shown = (await rows.first().textContent()) ?? '';
    assert.match(shown, /failed: .*safety system/);
    assert.ok(
      made.some((task) => shown.includes(task.body.id)),
      shown,
    );
    assert.deepEqual(watch.problems, []);
  });

  test('a dropped webhook delivery is shown under its task and redelivered from the keyboard', async () => {
    const { page, watch } = await openPage();
    const owner = await gw.account();
    receiver.answers.push(500, 500, 500, 500);
    const taskId = (await gw.call(owner.key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'a toll gate', callback_url: receiver.url })).body
      .id as string;
    const dropped = await eventually(async () => {
      const { body } = await gw.call(owner.key, 'GET', `/v1/account/webhook-deliveries?task_id=${taskId}`);
      return body.data[0]?.state === 'dropped' && body.data[0];
    }, 15_000);

    await page.goto((await gw.admin('POST', `/admin/accounts/${owner.accountId}/login-links`)).body.url);
    await goTo(page, 'Tasks', 'Tasks');
    await tableLoaded(page);
    const toggle = page.getByRole('button', { name: `Webhooks of ${taskId}` });
    await toggle.focus();
    await toggle.press('Enter');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    const deliveries = page.getByRole('table', { name: `Webhook deliveries of ${taskId}` });
    const row = deliveries.getByRole('row', { name: new RegExp(dropped.event_id) });
    await row.getByRole('cell', { name: 'dropped', exact: true }).waitFor();
    assert.match((await row.textContent()) ?? '', /dropped4HTTP 500/);
    await photograph(page, 'task-deliveries');

    await row.getByRole('button', { name: `Redeliver ${dropped.event_id}` }).press('Enter');
    // the list is read again while the delivery is pending, until it shows delivered
    await row.getByRole('cell', { name: 'delivered', exact: true }).waitFor({ timeout: 10_000 });
    assert.match((await row.textContent()) ?? '', /delivered1HTTP 200/);
    assert.equal(await row.getByRole('button').count(), 0, 'no Redeliver button on a delivered one');
    const received = receiver.deliveries.filter((d) => d.payload.task_id === taskId);
    assert.deepEqual(
      received.map((d) => d.headers['x-service-event-id']),
      Array(5).fill(dropped.event_id),
    );
    assert.deepEqual(watch.problems, []);
  });

  test('Settings sends a signed test event and shows the receiver’s answer', async () => {
    const { page, watch } = await openPage();
    await page.goto(await loginLink());
    await goTo(page, 'Settings', 'Settings');
    const secret = (await gw.call(account.key, 'GET', '/v1/account/webhook-secret')).body.secret as string;
    receiver.answers.push(201);
    receiver.answerBody = 'hello from the receiver';
    const before = receiver.deliveries.length;
    try {
      await page.getByLabel('Receiver URL').fill(receiver.url);
      await page.getByLabel('Receiver URL').press('Enter');
      const answer = page.getByRole('status').filter({ hasText: 'Receiver answered' });
      await answer.waitFor();
      assert.match((await answer.textContent()) ?? '', /Receiver answered HTTP 201 in \d+ ms .*hello from the receiver/);
      await photograph(page, 'settings-test-event');
    } finally {
      receiver.answerBody = '';
    }
    const got = receiver.deliveries[before]!;
    assert.equal(got.payload.type, 'webhook.test');
    assert.ok(verifyWebhook(secret, got.headers, got.rawBody), 'signed with the account’s current secret');
    assert.deepEqual(watch.problems, []);
  });

  test('a session whose key is revoked elsewhere goes back to signing in', async () => {
    const { page, watch } = await openPage();
    const other = (await gw.admin('POST', `/admin/accounts/${account.accountId}/keys`, { name: 'revoked elsewhere' })).body as { id: string; key: string };
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByLabel('API key').fill(other.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal((await gw.call(other.key, 'DELETE', `/v1/account/keys/${other.id}`)).status, 200);

    watch.expect(401, '/v1/account/keys');
    // The low-balance banner reads the account on each page, refused the same way.
    watch.expect(401, '/v1/account');
    // The Keys page's list is refused (401), and the console asks to sign in again.
    await goTo(page, 'Keys', 'Sign in to tollroute');
    assert.equal(new URL(page.url()).pathname, '/dashboard/login');
    assert.deepEqual(watch.problems, []);
  });

  test('signing out ends the session: the console asks to sign in again', async () => {
    const { page, watch } = await openPage();
    await page.goto(await loginLink());
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in to tollroute' }).waitFor();

    watch.expect(401, '/v1/account');
    await page.goto(`${gw.url}/dashboard/keys`);
    await page.getByRole('heading', { level: 1, name: 'Sign in to tollroute' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard/login');
    assert.deepEqual(watch.problems, []);
  });
});
