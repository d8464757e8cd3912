// A headless Chromium for the console's browser tests: Debian's build (TOLLROUTE_CHROMIUM, else
// /usr/bin/chromium), driven by playwright-core, which downloads no browser of its own. Each page
// is watched for anything going wrong that the test did not announce: console errors, uncaught
// exceptions, failed requests and answers of 400 or more.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before } from 'node:test';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { BUILT_CONSOLE_DIR } from '../../src/http/routes/console.js';

export const CHROMIUM = process.env.TOLLROUTE_CHROMIUM ?? '/usr/bin/chromium';

// Quiet and offline: nothing but the pages under test reaches the network.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Why the browser tests cannot run here, or undefined when they can. With
 * TOLLROUTE_REQUIRE_BROWSER=1 (CI) a missing browser is an error, not a reason to skip.
 */
export function browserMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `no Chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set TOLLROUTE_CHROMIUM to its path`;
  if (process.env.TOLLROUTE_REQUIRE_BROWSER === '1') throw new Error(`TOLLROUTE_REQUIRE_BROWSER=1 but ${reason}`);
  return `skipped: ${reason}`;
}

/** Playwright's launch gives the browser a fresh, temporary user-data dir of its own, removed on close. */
export const launchBrowser = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 60_000 });

/**
 * The browser side of a console suite, registered on the enclosing describe: it checks that the
 * console is built, launches Chromium once, opens each test's pages in fresh sessions, and closes
 * them all at the end. Pictures go to TOLLROUTE_SCREENSHOT_DIR when it is set, else to a temporary
 * folder removed at the end.
 *
 * A session ended with its test is emptied and handed to the next test instead of closed: a new
 * browser context costs Chromium a renderer process, about two seconds of CPU here, and an emptied
 * one is as fresh to the console (no cookies, no storage, a blank page, nothing listening).
 */
export function consoleBrowser(contextOptions: BrowserContextOptions = {}) {
  let browser: Browser | undefined;
  const idle: BrowserSession[] = [];
  const inUse: BrowserSession[] = [];
  const kept = process.env.TOLLROUTE_SCREENSHOT_DIR;
  const shotsDir = kept ?? mkdtempSync(path.join(tmpdir(), 'tollroute-shots-'));
  before(async () => {
    assert.ok(existsSync(path.join(BUILT_CONSOLE_DIR, 'index.html')), `the console is not built in ${BUILT_CONSOLE_DIR}: run npm run build`);
    mkdirSync(shotsDir, { recursive: true });
    browser = await launchBrowser();
  });
  afterEach(async () => {
    for (const session of inUse.splice(0)) {
      await session.empty();
      idle.push(session);
    }
  });
  after(async () => {
    for (const session of [...inUse, ...idle]) await session.context.close();
    await browser?.close();
    if (!kept) rmSync(shotsDir, { recursive: true, force: true });
  });
  return {
    /** A fresh browser session (its own cookies and storage) with its one page watched. */
    async openPage(): Promise<{ page: Page; watch: PageWatch }> {
      const session = idle.pop() ?? (await BrowserSession.open(browser!, { viewport: SIZES[0], ...contextOptions }));
      inUse.push(session);
      return { page: session.page, watch: new PageWatch(session.page) };
    },
    photograph: (page: Page, name: string) => photograph(page, shotsDir, name),
  };
}

/** A browser context and its one page, which can be emptied for the next test. */
class BrowserSession {
  /** The origins the page has shown since it was last emptied: their storage is cleared. */
  private readonly origins = new Set<string>();

  private constructor(
    readonly context: BrowserContext,
    readonly page: Page,
  ) {
    this.followOrigins();
  }

  static async open(browser: Browser, options: BrowserContextOptions): Promise<BrowserSession> {
    const context = await browser.newContext(options);
    return new BrowserSession(context, await context.newPage());
  }

  /** As a new context would be: a blank page at the first size, no cookies or storage, no listeners, no routes, no other pages. */
  async empty(): Promise<void> {
    const { context, page } = this;
    for (const other of context.pages()) if (other !== page) await other.close();
    page.removeAllListeners();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.goto('about:blank');
    await page.setViewportSize(SIZES[0]);
    // Every kind of storage, the tab's session storage included.
    const cdp = await context.newCDPSession(page);
    for (const origin of this.origins) await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' });
    await cdp.detach();
    await context.clearCookies();
    this.origins.clear();
    this.followOrigins();
  }

  private followOrigins(): void {
    this.page.on('framenavigated', (frame) => {
      if (frame.url().startsWith('http')) this.origins.add(new URL(frame.url()).origin);
    });
  }
}

/** What went wrong on a page, and the error answers the test announced beforehand. */
export class PageWatch {
  readonly problems: string[] = [];
  private readonly expected: { status: number; path: string }[] = [];

  constructor(page: Page) {
    page.on('console', (message) => {
      // Chromium also logs every error answer as "Failed to load resource"; the answer itself is judged below.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of')) {
        this.problems.push(`console error: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => this.problems.push(`uncaught: ${error.message}`));
    page.on('requestfailed', (request) => this.problems.push(`request failed: ${request.method()} ${request.url()} (${request.failure()?.errorText})`));
    page.on('response', (response) => {
      if (response.status() < 400) return;
      const path = new URL(response.url()).pathname;
      const index = this.expected.findIndex((e) => e.status === response.status() && e.path === path);
      if (index >= 0) this.expected.splice(index, 1);
      else this.problems.push(`unexpected ${response.status()} on ${response.request().method()} ${response.url()}`);
    });
  }

  /** The next answer `status` on `path` is one the test provokes. */
  expect(status: number, path: string): void {
    this.expected.push({ status, path });
  }
}

/** The sizes every console page is photographed at: a desktop and a phone. */
export const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'mobile', width: 390, height: 844 },
] as const;

/**
 * The page at both sizes, saved as `<name>-desktop.png` and `<name>-mobile.png` in `dir`; on a
 * phone's width nothing but the tables' own boxes may scroll sideways.
 */
export async function photograph(page: Page, dir: string, name: string): Promise<void> {
  const fits = () => document.documentElement.scrollWidth <= document.documentElement.clientWidth;
  for (const size of SIZES) {
    await page.setViewportSize(size);
    // The chart follows the new width on the next frame: wait for the page to fit, then take it.
    const settled = await page.waitForFunction(fits, null, { timeout: 5_000 }).then(
      () => true,
      () => false,
    );
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(settled, `${name} at ${size.width}px is ${overflow}px wider than the window`);
    await page.screenshot({ path: path.join(dir, `${name}-${size.name}.png`), fullPage: true });
  }
  await page.setViewportSize(SIZES[0]);
}

/** Follows the console's navigation link `link` and waits for the page's heading. */
export async function goTo(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: link }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** Settings → Webhook: reveals the secret, rotates it after confirming, and reads both off the page. */
export async function rotateSecretOnSettings(page: Page): Promise<{ old: string; rotated: string }> {
  await goTo(page, 'Settings', 'Settings');
  const field = page.getByRole('textbox', { name: 'Webhook secret' });
  assert.equal(await field.getAttribute('type'), 'password', 'hidden until revealed');
  await page.getByRole('button', { name: 'Reveal' }).click();
  assert.equal(await field.getAttribute('type'), 'text');
  const old = await field.inputValue();
  assert.match(old, /^whsec_/);
  await page.getByRole('button', { name: 'Rotate' }).click();
  await page.getByRole('dialog', { name: 'Rotate the webhook secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
  await page.waitForFunction((previous) => (document.getElementById('webhook-secret') as HTMLInputElement).value !== previous, old);
  const rotated = await field.inputValue();
  assert.match(rotated, /^whsec_/);
  assert.notEqual(rotated, old);
  return { old, rotated };
}
