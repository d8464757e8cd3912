// The console's Gallery in a real browser (headless Chromium) against a live gateway and the
// sandbox: image thumbnails and video players that load their files from where the upstream keeps
// them, an erased video beside its original, the kind filter, the empty state and the keyboard.
// Any console error, uncaught exception, failed request or error answer fails the test. The page
// is photographed at 1280×800 and 390×844; the pictures are kept in TOLLROUTE_SCREENSHOT_DIR when
// set (docs/screenshots for the README), else in a temporary folder.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserMissing, consoleBrowser, type PageWatch } from '../helpers/browser.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const skip = browserMissing();
if (skip) console.log(`console gallery browser test ${skip}`);

describe('the console gallery in a browser', { skip, timeout: 120_000 }, () => {
  const { openPage, photograph } = consoleBrowser();
  let gw: TestGateway;
  let account: { accountId: string; key: string };
  const made: Record<'image' | 'video' | 'erase', string> = { image: '', video: '', erase: '' };

  /** Creates a task and waits until it has succeeded; answers its id. */
  async function succeeded(post: string, body: unknown, get: string): Promise<string> {
    const created = await gw.call(account.key, 'POST', post, body);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    await eventually(async () => (await gw.call(account.key, 'GET', `${get}/${created.body.id}`)).body.status === 'succeeded', 10_000);
    return created.body.id;
  }

  before(async () => {
    gw = await startTestGateway();
    account = await gw.account({ creditMicros: 25_000_000 });
    made.image = await succeeded('/v1/images/async', { model: 'sandbox-image', prompt: 'two toll gates', n: 2 }, '/v1/images/async');
    const video = { model: 'sandbox-video', content: [{ type: 'text', text: 'a toll gate at dusk' }], duration: 4, return_last_frame: true };
    made.video = await succeeded('/v1/videos/generations', video, '/v1/videos/generations');
    made.erase = await succeeded('/v1/videos/erase-subtitle', { video_task_id: made.video }, '/v1/videos/erase-subtitle');
  });
  after(async () => gw?.close());

  /** A fresh browser session signed in to `accountId` by link, on the Gallery page, watched. */
  async function openGallery(accountId = account.accountId): Promise<{ page: Page; watch: PageWatch }> {
    const { page, watch } = await openPage();
    await page.goto((await gw.admin('POST', `/admin/accounts/${accountId}/login-links`)).body.url);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Gallery' }).click();
    await page.getByRole('heading', { level: 1, name: 'Gallery' }).waitFor();
    await galleryLoaded(page);
    return { page, watch };
  }
  /** The list holds the answer to the filter and page shown (it is aria-busy while loading). */
  const galleryLoaded = (page: Page) => page.locator('.gallery-page[aria-busy="false"]').waitFor();
  const tile = (page: Page, taskId: string) => page.locator(`li[data-task-id="${taskId}"]`);

  /** Every image and video on the page has loaded its file (a video its first frame); answers how many of each. */
  async function mediaLoaded(page: Page): Promise<{ images: number; videos: number }> {
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('img')].every((image) => image.complete && image.naturalWidth > 0) &&
        [...document.querySelectorAll('video')].every((video) => video.readyState >= HTMLMediaElement.HAVE_CURRENT_DATA || video.error),
      null,
      { timeout: 10_000 },
    );
    const failed = await page.$$eval('video', (videos) => videos.filter((video) => video.error).map((video) => `${video.src}: ${video.error?.message}`));
    assert.deepEqual(failed, [], 'every video loads');
    return { images: await page.locator('.gallery img').count(), videos: await page.locator('.gallery video').count() };
  }

  test('the images are thumbnails and the videos players, each loading its file from the sandbox', async () => {
    const { page, watch } = await openGallery();
    assert.deepEqual(await mediaLoaded(page), { images: 2, videos: 3 });
    const thumbnail = tile(page, made.image).getByRole('img', { name: `Image 1 of 2 from ${made.image}` });
    assert.equal(await thumbnail.getAttribute('loading'), 'lazy');
    const player = tile(page, made.video).locator('video');
    assert.equal(await player.getAttribute('preload'), 'metadata');
    assert.equal(await player.getAttribute('controls'), '');
    assert.ok(await player.getAttribute('poster'), 'the last frame is the poster');
    assert.deepEqual(watch.problems, []);
  });

  test('the erased video is shown beside its original, each labelled', async () => {
    const { page, watch } = await openGallery();
    await mediaLoaded(page);
    const pair = tile(page, made.erase);
    const original = pair.locator('figure').filter({ hasText: 'Original' });
    const erased = pair.locator('figure').filter({ hasText: 'Subtitles erased' });
    const [left, right] = [await original.boundingBox(), await erased.boundingBox()];
    assert.ok(left && right);
    assert.equal(Math.round(left.y), Math.round(right.y), 'on one row');
    assert.ok(left.x + left.width <= right.x, 'the original first, then the erased one');
    assert.equal(await original.locator('video').getAttribute('aria-label'), `Original video of ${made.erase}`);
    assert.equal(await erased.locator('video').getAttribute('aria-label'), `Video of ${made.erase} with subtitles erased`);
    // Chromium's players fade a loading spinner out for a moment after their first frame: the
    // kept pictures wait for it to go; the check above has already judged the page.
    if (process.env.TOLLROUTE_SCREENSHOT_DIR) await page.waitForTimeout(3_000);
    await photograph(page, 'gallery');
    assert.deepEqual(watch.problems, []);
  });

  test('the kind filter, chosen from the keyboard, shows only the erased pair', async () => {
    const { page, watch } = await openGallery();
    const kind = page.getByLabel('Kind');
    await kind.focus();
    // any → image → video → erase, as a keyboard user steps through a closed select
    for (let step = 0; step < 3; step++) await kind.press('ArrowDown');
    assert.equal(await kind.inputValue(), 'erase');
    await galleryLoaded(page);
    await page.locator('.gallery > li').first().waitFor();
    assert.deepEqual(await page.locator('.gallery > li').evaluateAll((tiles) => tiles.map((li) => li.getAttribute('data-task-id'))), [made.erase]);
    assert.deepEqual(await mediaLoaded(page), { images: 0, videos: 2 });
    assert.deepEqual(watch.problems, []);
  });

  test('a thumbnail is reached with Tab and opens the full image', async () => {
    const { page, watch } = await openGallery();
    const link = tile(page, made.image).getByRole('link', { name: `Image 1 of 2 from ${made.image} (opens full size)` });
    // From the filter, Tab goes through the tiles in order: the erase pair, the video, then the
    // images; each player's controls take several presses.
    await page.getByLabel('Kind').focus();
    for (let presses = 0; presses < 60 && !(await link.evaluate((el) => el === document.activeElement)); presses++) await page.keyboard.press('Tab');
    assert.ok(await link.evaluate((el) => el === document.activeElement), 'the thumbnail link has the focus');
    const [opened] = await Promise.all([page.context().waitForEvent('page'), page.keyboard.press('Enter')]);
    await opened.waitForLoadState();
    assert.equal(opened.url(), await link.getAttribute('href'));
    assert.deepEqual(watch.problems, []);
  });

  test('the gallery pages back and forth, 24 tiles a page', async () => {
    const busy = await gw.account({ creditMicros: 25_000_000 });
    const created = await Promise.all(
      Array.from({ length: 25 }, (_, i) => gw.call(busy.key, 'POST', '/v1/images/async', { model: 'sandbox-image', prompt: `gate ${i}` })),
    );
    assert.deepEqual(new Set(created.map((task) => task.status)), new Set([200]));
    await eventually(async () => (await gw.call(busy.key, 'GET', '/v1/account/gallery?limit=25')).body.data.length === 25, 15_000);
    const { page, watch } = await openGallery(busy.accountId);
    const tiles = page.locator('.gallery > li');
    assert.equal(await tiles.count(), 24);
    const first = await tiles.first().getAttribute('data-task-id');
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByText('Page 2').waitFor();
    await galleryLoaded(page);
    assert.equal(await tiles.count(), 1);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.getByText('Page 1').waitFor();
    await galleryLoaded(page);
    assert.equal(await tiles.first().getAttribute('data-task-id'), first);
    assert.deepEqual(watch.problems, []);
  });

  test('an account that has generated nothing is told so', async () => {
    const empty = await gw.account();
    const { page, watch } = await openGallery(empty.accountId);
    assert.equal(await page.locator('.gallery > li').count(), 0);
    await page.getByText('Nothing here yet').waitFor();
    await photograph(page, 'gallery-empty');
    assert.deepEqual(watch.problems, []);
  });
});
