// `tollroute prices draft` run as an operator runs it: a YAML draft to review, which the gateway's
// own configuration loader accepts once pasted, and which never touches the configuration itself.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { findProvider } from '@pydantic/genai-prices';
import { parse as parseYaml } from 'yaml';
import type { PackagePrices } from '../../src/billing/price-draft.js';
import { buildConfig } from '../../src/config/load.js';
import { PriceSchema } from '../../src/config/schema.js';
import { runCli } from '../helpers/processes.js';

const packageManifest = JSON.parse(readFileSync(new URL('../../node_modules/@pydantic/genai-prices/package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const folder = () => mkdtempSync(path.join(tmpdir(), 'tollroute-price-draft-'));

type Draft = { models: Record<string, { price: Record<string, unknown> }> };

async function draft(args: string[]): Promise<{ draft: Draft; text: string }> {
  const run = await runCli(['prices', 'draft', ...args], {});
  assert.equal(run.code, 0, run.stderr);
  return { draft: parseYaml(run.stdout) as Draft, text: run.stdout };
}

// A configuration an operator might have: two models the package knows (under their own ids), one it
// does not, and a channel key taken from an environment variable the draft has no need of.
const CONFIG = `channels:
  anth: { kind: anthropic, base_url: "https://api.anthropic.com", api_key: "\${ANTHROPIC_KEY_NOT_SET}" }
  oai: { kind: openai, base_url: "https://api.openai.com" }
models:
  house-sonnet: { type: chat, channel: anth, upstream_model: claude-sonnet-4-5-20250929, price: { input_token: 1 } }
  house-mini:
    type: chat
    channels: [{ channel: oai, upstream_model: gpt-4o-mini }]
  house-own-model: { type: chat, channel: oai }
`;

test("the draft's header names the package and its version, the date and the markup", async () => {
  const { text } = await draft(['--provider', 'anthropic', '--model', 'claude-sonnet-4-5', '--markup', '20', '--at', '2026-06-01']);
  const header = text.split('\nmodels:')[0]!;
  assert.ok(header.includes(`@pydantic/genai-prices ${packageManifest.version}`), header);
  assert.ok(header.includes(`on ${new Date().toISOString().slice(0, 10)}`), header);
  assert.ok(header.includes('prices in force on 2026-06-01'), header);
  assert.ok(header.includes('markup of 20%'), header);
  assert.ok(
    header.split('\n').every((line) => line.startsWith('#') || line === ''),
    header,
  );
});

test("a drafted model carries the package's price with the markup, in micros", async () => {
  const prices = findProvider({ providerId: 'anthropic' })?.models.find((model) => model.id === 'claude-sonnet-4-5')?.prices as PackagePrices;
  assert.deepEqual(prices.input_mtok, { base: 3, tiers: [{ start: 200_000, price: 6 }] });
  const { draft: drafted } = await draft(['--provider', 'anthropic', '--model', 'claude-sonnet-4-5', '--markup', '20', '--at', '2026-06-01']);
  assert.deepEqual(Object.keys(drafted.models), ['claude-sonnet-4-5']);
  assert.equal(drafted.models['claude-sonnet-4-5']?.price.input_token, 3_600_000); // 3 USD a million tokens, 20% over
});

test('every model drafted for a provider is a price the configuration loader accepts under models: with a channel', async () => {
  const { draft: drafted } = await draft(['--provider', 'google', '--markup', '15']);
  const ids = Object.keys(drafted.models);
  assert.ok(ids.length > 10, `${ids.length} models drafted`);
  assert.ok(
    ids.some((id) => drafted.models[id]?.price.tiers !== undefined),
    'some drafted price has long-context tiers',
  );
  for (const id of ids) assert.equal(PriceSchema.safeParse(drafted.models[id]?.price).success, true, id);
  const models = Object.fromEntries(ids.map((id) => [id, { type: 'chat', channel: 'up', ...drafted.models[id] }]));
  const { config } = buildConfig({ channels: { up: { kind: 'gemini', base_url: 'http://127.0.0.1:9999', api_key: 'k' } }, models });
  assert.deepEqual(Object.keys(config.models).sort(), [...ids].sort());
});

test('with --config only the models configured there are drafted, under their configured ids', async () => {
  const file = path.join(folder(), 'gateway.yaml');
  writeFileSync(file, CONFIG);
  const { draft: drafted, text } = await draft(['--config', file]);
  assert.deepEqual(Object.keys(drafted.models).sort(), ['house-mini', 'house-sonnet']);
  assert.match(text, /Not found in the price data: house-own-model/);
});

test('the configuration given is left byte for byte as it was', async () => {
  const file = path.join(folder(), 'gateway.yaml');
  writeFileSync(file, CONFIG);
  const before = readFileSync(file);
  const out = path.join(folder(), 'draft.yaml');
  const run = await runCli(['prices', 'draft', '--config', file, '--markup', '30', '--out', out], {});
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(readFileSync(file), before);
  assert.ok(Object.keys((parseYaml(readFileSync(out, 'utf8')) as Draft).models).length > 0);
});

test('a draft is refused a place over the configuration it is drafted for', async () => {
  const file = path.join(folder(), 'gateway.yaml');
  writeFileSync(file, CONFIG);
  const run = await runCli(['prices', 'draft', '--config', file, '--out', file], {});
  assert.equal(run.code, 1);
  assert.match(run.stderr, /never written over a configuration/);
  assert.equal(readFileSync(file, 'utf8'), CONFIG);
});

test('--out writes the draft to the file and nothing to standard output', async () => {
  const out = path.join(folder(), 'draft.yaml');
  const run = await runCli(['prices', 'draft', '--provider', 'perplexity', '--out', out], {});
  assert.deepEqual([run.code, run.stdout], [0, '']);
  assert.ok(existsSync(out));
  assert.ok(Object.keys((parseYaml(readFileSync(out, 'utf8')) as Draft).models).includes('sonar-pro'));
});

test('a markup of -100% is refused, naming the limit, and nothing is written', async () => {
  const out = path.join(folder(), 'draft.yaml');
  const run = await runCli(['prices', 'draft', '--provider', 'perplexity', '--markup=-100', '--out', out], {});
  assert.equal(run.code, 1);
  assert.match(run.stderr, /above -100 percent/);
  assert.equal(existsSync(out), false);
});

test('a provider the package does not know is refused, naming the ones it does', async () => {
  const run = await runCli(['prices', 'draft', '--provider', 'no-such-provider'], {});
  assert.equal(run.code, 1);
  assert.match(run.stderr, /no provider "no-such-provider".*anthropic/);
});
