// The console's Models and prices page in a real browser (headless Chromium) against a live gateway:
// every model the account may call, with its type, and the prices GET /v1/account/models gives it,
// token prices per million tokens. The figures are compared with the API's own answer, so the page
// is checked whether or not the gateway prices its models yet. Any console error, uncaught
// exception, failed request or unannounced error answer fails the test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Model } from '../../console/src/api.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { browserMissing, consoleBrowser, goTo } from '../helpers/browser.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const skip = browserMissing();
if (skip) console.log(`console prices browser test ${skip}`);

const CATALOGUE = Object.entries(sandboxCatalogue('http://127.0.0.1:1').models!).map(([id, model]) => ({ id, type: model.type }));
const TOKEN_KEYS = new Set([
  'prompt',
  'completion',
  'input_cache_read',
  'input_cache_write',
  'input_cache_write_1h',
  'internal_reasoning',
  'input_audio',
  'output_audio',
  'input_image',
]);

/** A decimal as an exact fraction, commas ignored: "1,234.5" is 12345/10. */
function fraction(text: string): { numerator: bigint; denominator: bigint } {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim().replaceAll(',', ''));
  assert.ok(match, `"${text}" is a plain decimal`);
  return { numerator: BigInt(`${match[1]}${match[2] ?? ''}`), denominator: 10n ** BigInt((match[2] ?? '').length) };
}

/** The page's figure is the API's per-unit decimal, times a million for a token dimension. */
function assertShownAs(shown: string, perUnit: string, key: string, where: string): void {
  const page = fraction(shown);
  const api = fraction(perUnit);
  const scale = TOKEN_KEYS.has(key) ? 1_000_000n : 1n;
  assert.equal(page.numerator * api.denominator, api.numerator * scale * page.denominator, `${where} ${key}: page shows ${shown}, the API gives ${perUnit}`);
}

interface ShownRow {
  type: string;
  text: string;
  rates: Record<string, string>;
  tiers: Record<string, Record<string, string>>;
}

/** Every row of the table as the page shows it, by model id. */
function shownRows(page: Page): Promise<Record<string, ShownRow>> {
  return page.evaluate(() => {
    const rows: Record<string, ShownRow> = {};
    for (const row of document.querySelectorAll<HTMLElement>('tr[data-model]')) {
      const rates: Record<string, string> = {};
      const tiers: Record<string, Record<string, string>> = {};
      for (const rate of row.querySelectorAll<HTMLElement>('[data-unit]')) {
        const tier = rate.closest<HTMLElement>('[data-tier]')?.dataset.tier;
        if (tier === undefined) rates[rate.dataset.unit!] = rate.textContent ?? '';
        else (tiers[tier] ??= {})[rate.dataset.unit!] = rate.textContent ?? '';
      }
      const type = row.querySelector('[data-column="type"]')?.textContent ?? '';
      rows[row.dataset.model!] = { type, text: row.textContent ?? '', rates, tiers };
    }
    return rows;
  });
}

describe('the console’s Models and prices page in a browser', { skip, timeout: 120_000 }, () => {
  const { openPage, photograph } = consoleBrowser();
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw?.close());

  /** A signed-in page on Models and prices; `answer` may change what GET /v1/account/models answers. */
  async function pricesPage(answer?: (models: Model[]) => Model[]) {
    const { page, watch } = await openPage();
    const { accountId, key } = await gw.account();
    if (answer) {
      await page.route('**/v1/account/models', async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as { data: Model[] };
        await route.fulfill({ response, json: { ...body, data: answer(body.data) } });
      });
    }
    await page.goto((await gw.admin('POST', `/admin/accounts/${accountId}/login-links`)).body.url);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await goTo(page, 'Models and prices', 'Models and prices');
    await page.locator('tr[data-model]').first().waitFor();
    const models = (await gw.call(key, 'GET', '/v1/account/models')).body.data as Model[];
    return { page, watch, models };
  }

  test('every sandbox model is listed with its type', async () => {
    const { page, watch } = await pricesPage();
    const rows = await shownRows(page);
    assert.deepEqual(Object.keys(rows).sort(), CATALOGUE.map((model) => model.id).sort());
    for (const model of CATALOGUE) assert.equal(rows[model.id]?.type, model.type, model.id);
    assert.deepEqual(watch.problems, []);
  });

  test('each model shows the prices the API gives it, or "not priced" where it gives none', async () => {
    const { page, watch, models } = await pricesPage();
    const rows = await shownRows(page);
    for (const model of models) {
      const row = rows[model.id];
      assert.ok(row, `${model.id} is listed`);
      if (model.pricing === undefined) {
        assert.match(row.text, /not priced/, model.id);
        continue;
      }
      const { tiers = [], ...rates } = model.pricing;
      assert.deepEqual(Object.keys(row.rates).sort(), Object.keys(rates).sort(), `${model.id}: the dimensions shown`);
      for (const [key, perUnit] of Object.entries(rates)) assertShownAs(row.rates[key]!, perUnit, key, model.id);
      for (const tier of tiers) {
        const { above_input_tokens, ...tierRates } = tier;
        for (const [key, perUnit] of Object.entries(tierRates))
          assertShownAs(row.tiers[String(above_input_tokens)]?.[key] ?? '', perUnit, key, `${model.id} past ${above_input_tokens}`);
      }
    }
    assert.deepEqual(watch.problems, []);
  });

  test('a model the API prices is shown at its price', async (t) => {
    const { page, watch, models } = await pricesPage();
    const priced = models.find((model) => model.pricing !== undefined && Object.keys(model.pricing).length > 0);
    // Until the gateway gives `pricing`, there is no priced model to see.
    if (!priced) return t.skip('no model in GET /v1/account/models has pricing yet');
    const { tiers: _, ...rates } = priced.pricing!;
    const [key, perUnit] = Object.entries(rates)[0]!;
    const shown = await page.locator(`tr[data-model="${priced.id}"] [data-unit="${key}"]`).first().textContent();
    assertShownAs(shown ?? '', perUnit!, key, priced.id);
    assert.deepEqual(watch.problems, []);
  });

  test('a model answered without pricing shows "not priced" in place of its prices', async () => {
    const { page, watch } = await pricesPage((models) => models.map(({ pricing: _, ...model }) => model));
    const row = page.locator('tr[data-model="sandbox-chat"]');
    assert.equal((await row.locator('td.unpriced').textContent())?.trim(), 'not priced');
    assert.equal(await row.locator('[data-unit]').count(), 0);
    assert.deepEqual(watch.problems, []);
  });

  test('token prices are shown per million tokens and the rest, with long-context tiers, in the details', async () => {
    const pricing = {
      prompt: '0.000003',
      completion: '0.000015',
      input_cache_write: '0.00000375',
      web_search: '0.01',
      tiers: [{ above_input_tokens: 200_000, prompt: '0.000006', completion: '0.0000225' }],
    };
    const { page, watch } = await pricesPage((models) => models.map((model) => (model.id === 'sandbox-claude' ? { ...model, pricing } : model)));
    const row = page.locator('tr[data-model="sandbox-claude"]');
    const cells = await row.locator('td').allTextContents();
    // type, input, cached input, output, request, other prices
    assert.deepEqual(cells.slice(0, 5), ['chat', '3', '—', '15', '—']);
    const details = await row.locator('td.detail li').allTextContents();
    assert.deepEqual(details, [
      'cache write 3.75 per 1M tokens',
      'web search 0.01 per search',
      'past 200,000 input tokens: input 6 per 1M tokens, output 22.5 per 1M tokens',
    ]);
    await photograph(page, 'prices');
    assert.deepEqual(watch.problems, []);
  });

  test('the type filter lists only the models of the type chosen', async () => {
    const { page, watch } = await pricesPage();
    await page.getByRole('combobox', { name: 'Type' }).selectOption('embedding');
    const rows = await shownRows(page);
    const embeddings = CATALOGUE.filter((model) => model.type === 'embedding').map((model) => model.id);
    assert.ok(embeddings.length > 1);
    assert.deepEqual(Object.keys(rows).sort(), embeddings.sort());
    assert.deepEqual(watch.problems, []);
  });
});
