// Key limits through the account console in a real browser (headless Chromium) against a live
// gateway: a key created with allowed models, a daily cap, an expiry and a rate from the Keys
// page's form, listed with them; real calls with it (refused with 403 on another model, 402 past
// the cap); its spend shown; its cap raised from the Edit limits dialog, which sends only what
// changed, and honoured on the next call; the 403 a session signed in with a limited key is shown;
// and the Usage page's answer time. Any console error, uncaught exception, failed request or
// unannounced error answer fails the test. The keys page with limits and the edit dialog are
// photographed at 1280×800 and 390×844, kept in TOLLROUTE_SCREENSHOT_DIR when set.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { formatMicros } from '../../console/src/money.js';
import { browserMissing, consoleBrowser, goTo } from '../helpers/browser.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// max_tokens keeps each call's hold small, so a cap of a few calls is reached within the test.
const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b c' }], max_tokens: 8 };
const CAP = '0.0005'; // 500 micros: a handful of these calls
const EXPIRES = `${new Date().getUTCFullYear() + 1}-06-30T12:00`;
const LIMITED_KEYS_REFUSED = 'this API key has limits (its rpm included), so it may not issue or change keys; use a key without limits';

const skip = browserMissing();
if (skip) console.log(`console key limits browser test ${skip}`);

describe('key limits in the account console', { skip, timeout: 180_000 }, () => {
  const { openPage, photograph } = consoleBrowser();
  let gw: TestGateway;
  let owner: { accountId: string; key: string; keyId: string };
  /** The key the first test creates with limits; the later tests use it. */
  let limited: { id: string; secret: string };

  before(async () => {
    gw = await startTestGateway();
    owner = await gw.account({ creditMicros: 10_000_000 });
  });
  after(async () => gw?.close());

  /** The owner's console, signed in by the operator's link (no key: it may manage keys). */
  async function ownerConsole(heading = 'API keys', link = 'Keys') {
    const opened = await openPage();
    await opened.page.goto((await gw.admin('POST', `/admin/accounts/${owner.accountId}/login-links`)).body.url);
    await goTo(opened.page, link, heading);
    return opened;
  }
  const listedKey = async (id: string) => (await gw.call(owner.key, 'GET', '/v1/account/keys')).body.data.find((key: { id: string }) => key.id === id);
  const keyRow = (page: Page, id: string) => page.locator(`tr[data-key-id="${id}"]`);

  test('a key created with limits from the form is listed with them, and calls with it are held to them', async () => {
    const { page, watch } = await ownerConsole();
    await page.getByLabel('Name of a new key').fill('capped');
    // The limits are folded away until asked for; the keyboard opens them.
    await page.getByText('Limits (optional)').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('checkbox', { name: 'sandbox-chat', exact: true }).check();
    await page.getByLabel('Daily spend cap').fill(CAP);
    await page.getByLabel('Expires (UTC').fill(EXPIRES);
    await page.getByLabel('Requests per minute').fill('120');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByRole('textbox', { name: 'New API key' }).inputValue();
    assert.match(secret, /^tr-/);

    const shown = (await gw.call(owner.key, 'GET', '/v1/account/keys')).body.data.find((key: { name: string }) => key.name === 'capped');
    limited = { id: shown.id, secret };
    assert.deepEqual(
      { models: shown.allowed_models, daily: shown.daily_cap_micros, monthly: shown.monthly_cap_micros, rpm: shown.rpm, expires: shown.expires_at },
      { models: ['sandbox-chat'], daily: 500, monthly: null, rpm: 120, expires: `${EXPIRES}:00.000Z` },
    );
    const row = keyRow(page, limited.id);
    await row.getByText(`0.00 of ${CAP} today`).waitFor();
    const limits = (await row.getByRole('list').textContent()) ?? '';
    for (const part of ['Models: sandbox-chat', '120 requests a minute', `Expires ${EXPIRES.replace('T', ' ')} UTC`]) assert.ok(limits.includes(part), limits);

    assert.equal((await gw.call(secret, 'POST', '/v1/chat/completions', CHAT)).status, 200);
    const otherModel = await gw.call(secret, 'POST', '/v1/chat/completions', { ...CHAT, model: 'sandbox-claude' });
    assert.equal(otherModel.status, 403);
    assert.match(otherModel.body.error, /may not use model sandbox-claude/);
    // Calls one after another until the cap refuses one: a few pass, and then it holds.
    const statuses: number[] = [];
    let refused: { status: number; body: any } | undefined;
    while (!refused && statuses.length < 30) {
      const answer = await gw.call(secret, 'POST', '/v1/chat/completions', CHAT);
      statuses.push(answer.status);
      if (answer.status !== 200) refused = answer;
    }
    assert.ok(statuses.length >= 2, `the cap let through ${statuses.length - 1} more calls`);
    assert.ok(refused, `no call was refused in ${statuses.length}`);
    assert.equal(refused.status, 402, JSON.stringify(statuses));
    assert.equal(refused.body.type, 'billing_error');
    assert.match(refused.body.error, /daily spend cap of 0\.000500 is reached/);

    await gw.settled(owner.accountId);
    const { spend } = await listedKey(limited.id);
    assert.ok(spend.day_micros > 0 && spend.day_micros <= 500, JSON.stringify(spend));
    await page.reload();
    await row.getByText(`${formatMicros(spend.day_micros)} of ${CAP} today`).waitFor();
    await photograph(page, 'keys-limits');
    assert.deepEqual(watch.problems, []);
  });

  test('Edit limits sends only the fields changed, a cleared field removes its limit, and the next call obeys', async () => {
    const { page, watch } = await ownerConsole();
    const row = keyRow(page, limited.id);
    const dialog = page.getByRole('dialog', { name: /^Limits of key/ });
    const edit = row.getByRole('button', { name: /^Edit limits of key/ });

    // Escape closes it, and nothing is sent.
    await edit.click();
    await dialog.waitFor();
    assert.equal(await dialog.getByLabel('Daily spend cap').inputValue(), CAP);
    assert.ok(await dialog.getByRole('checkbox', { name: 'sandbox-chat', exact: true }).isChecked());
    await photograph(page, 'keys-edit-limits');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });

    await edit.click();
    await dialog.getByLabel('Daily spend cap').fill('1');
    const [raised] = await Promise.all([
      page.waitForRequest((request) => request.method() === 'PATCH'),
      dialog.getByRole('button', { name: 'Save limits' }).click(),
    ]);
    assert.deepEqual(raised.postDataJSON(), { daily_cap_micros: 1_000_000 });
    await dialog.waitFor({ state: 'hidden' });
    await row.getByText(/ of 1\.00 today$/).waitFor();
    assert.equal((await gw.call(limited.secret, 'POST', '/v1/chat/completions', CHAT)).status, 200);

    await edit.click();
    await dialog.getByLabel('Expires (UTC').fill('');
    const [cleared] = await Promise.all([
      page.waitForRequest((request) => request.method() === 'PATCH'),
      dialog.getByRole('button', { name: 'Save limits' }).press('Enter'),
    ]);
    assert.deepEqual(cleared.postDataJSON(), { expires_at: null });
    await dialog.waitFor({ state: 'hidden' });
    await row.getByText(/^Expires /).waitFor({ state: 'detached' });
    const now = await listedKey(limited.id);
    assert.deepEqual(
      { models: now.allowed_models, daily: now.daily_cap_micros, rpm: now.rpm, expires: now.expires_at },
      { models: ['sandbox-chat'], daily: 1_000_000, rpm: 120, expires: null },
    );
    assert.deepEqual(watch.problems, []);
  });

  test('signed in with a limited key, changing limits shows the API’s 403 in its own words', async () => {
    const { page, watch } = await openPage();
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByLabel('API key').fill(limited.secret);
    await page.getByLabel('API key').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await goTo(page, 'Keys', 'API keys');

    watch.expect(403, `/v1/account/keys/${limited.id}`);
    await keyRow(page, limited.id)
      .getByRole('button', { name: /^Edit limits of key/ })
      .click();
    const dialog = page.getByRole('dialog', { name: /^Limits of key/ });
    await dialog.getByLabel('Requests per minute').fill('600');
    await dialog.getByRole('button', { name: 'Save limits' }).click();
    const alert = dialog.getByRole('alert');
    await alert.waitFor();
    assert.equal((await alert.textContent())?.trim(), LIMITED_KEYS_REFUSED);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });

    watch.expect(403, '/v1/account/keys');
    const name = page.getByLabel('Name of a new key');
    // Under load the field was once found empty right after it was filled (a full run, CI, not
    // alone): filled again until it holds the name, so the test goes on to what it is about.
    for (let tries = 0; (await name.inputValue()) !== 'unlimited, I hope'; tries++) {
      assert.ok(tries < 20, 'the name field never kept the name');
      if (tries > 0) await page.waitForTimeout(100);
      await name.fill('unlimited, I hope');
    }
    await page.getByRole('button', { name: 'Create key' }).click();
    // Seen once in a full run under load: the alert never came. Say what the page showed instead.
    await page
      .getByRole('alert')
      .filter({ hasText: LIMITED_KEYS_REFUSED })
      .waitFor()
      .catch(async (error: Error) => {
        const seen = { alerts: await page.getByRole('alert').allTextContents(), name: await name.inputValue(), problems: watch.problems };
        throw new Error(`${error.message}\nwhat the page showed: ${JSON.stringify(seen)}`);
      });
    assert.equal((await listedKey(limited.id)).rpm, 120, 'unchanged');
    assert.deepEqual(watch.problems, []);
  });

  test('the Usage page shows how long the channel took to answer a chat call', async () => {
    await gw.settled(owner.accountId);
    const { page, watch } = await ownerConsole('Usage', 'Usage');
    await page.locator('.table[aria-busy="false"]').waitFor();
    const [latest] = (await gw.call(owner.key, 'GET', '/v1/account/usage?limit=1')).body.data;
    assert.equal(latest.model, 'sandbox-chat');
    assert.ok(Number.isInteger(latest.upstream_ms), JSON.stringify(latest));
    const headers = await page.locator('thead th').allTextContents();
    const column = headers.findIndex((header) => header.trim() === 'Answer time');
    assert.ok(column >= 0, headers.join(' | '));
    const cell = page.locator('tbody tr').first().locator('td').nth(column);
    assert.equal(await cell.textContent(), `${latest.upstream_ms} ms`);
    assert.deepEqual(watch.problems, []);
  });
});
