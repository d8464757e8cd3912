// The browser helper hands a session ended with one test to the next, emptied: these tests check
// that nothing of the last test (cookies, storage of either kind, routes, listeners, extra pages, the
// window size) reaches the next one.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserMissing, consoleBrowser } from './browser.js';

const skip = browserMissing();

/** What a page at `origin` holds of an earlier visit. */
async function leftovers(page: Page, origin: string) {
  await page.goto(`${origin}/page`);
  return page.evaluate(() => ({
    cookie: document.cookie,
    local: localStorage.length,
    session: sessionStorage.length,
    body: document.body.textContent,
    width: window.innerWidth,
  }));
}

const EMPTY = { cookie: '', local: 0, session: 0, body: 'served', width: 1280 };

describe('browser sessions handed from test to test', { skip }, () => {
  const { openPage } = consoleBrowser();
  let server: Server;
  let first: string;
  let second: string;
  let keptPage: Page;
  const heardByLastTest: string[] = [];

  before(async () => {
    // `/set` sets a cookie; every path answers the same page.
    server = createServer((req, res) => {
      if (req.url === '/set') res.setHeader('set-cookie', 'left=1; Path=/');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>served</p>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    first = `http://127.0.0.1:${port}`;
    second = `http://localhost:${port}`;
  });
  after(() => server?.close());

  test('a test leaves cookies, both storages, a route, a listener, a popup and a phone-sized window', async () => {
    const { page } = await openPage();
    keptPage = page;
    await page.goto(`${first}/set`);
    // A cookie of a site the page never showed, as a request to a third party leaves.
    await page.context().addCookies([{ name: 'elsewhere', value: '1', domain: 'elsewhere.test', path: '/' }]);
    await page.evaluate(() => {
      localStorage.setItem('left', '1');
      sessionStorage.setItem('left', '1');
    });
    await page.route('**/page', (route) => route.fulfill({ contentType: 'text/html', body: '<p>routed</p>' }));
    page.on('console', (message) => heardByLastTest.push(message.text()));
    await Promise.all([page.waitForEvent('popup'), page.evaluate(() => window.open('/popup'))]);
    await page.setViewportSize({ width: 390, height: 844 });
    assert.equal(page.context().pages().length, 2);
  });

  test('the next test gets the same page with none of it', async () => {
    const { page } = await openPage();
    assert.equal(page, keptPage, 'the session was handed on, not made anew');
    assert.equal(page.url(), 'about:blank');
    assert.deepEqual(page.context().pages(), [page]);
    assert.deepEqual(await page.context().cookies(), []);
    assert.deepEqual(await leftovers(page, first), EMPTY);
    await page.evaluate(() => console.log('after the hand-over'));
    assert.deepEqual(heardByLastTest, []);
  });

  test('a test that shows two origins leaves storage on both', async () => {
    const { page } = await openPage();
    for (const origin of [first, second]) {
      await page.goto(`${origin}/page`);
      await page.evaluate(() => {
        localStorage.setItem('left', '1');
        sessionStorage.setItem('left', '1');
      });
    }
  });

  test('the next test finds neither origin’s storage', async () => {
    const { page } = await openPage();

    assert.equal(page, keptPage);
    assert.deepEqual(await leftovers(page, first), EMPTY);
    assert.deepEqual(await leftovers(page, second), EMPTY);
  });
});
