// The draft of `tollroute prices draft` (src/cli/prices-command.ts): a price list drafted from
// @pydantic/genai-prices with the operator's markup, written as YAML for the operator to review and
// paste. It never writes a configuration: prices change only when the operator puts them in tollroute.yaml.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type ModelInfo, waitForUpdate } from '@pydantic/genai-prices';
import { Document, type Pair, type Scalar, type YAMLMap } from 'yaml';
import { type DraftedPrice, draftPrice, type Markup, type PackagePriceChoice, type PackagePrices, pricesInForce } from '../billing/price-draft.js';
import { chosenProviders, configuredModels, type ModelToDraft, matchConfigured, providerModels } from './price-draft-models.js';

const PACKAGE_NAME = '@pydantic/genai-prices';

export interface PriceDraftOptions {
  providers: string[];
  model?: string;
  markup: Markup;
  microsPerUsd: bigint;
  at: Date;
  /** A tollroute.yaml: only its models are drafted, under their configured ids. */
  config?: string;
}

/** The installed package's version, from its package.json (its exports map hides the file). */
function packageVersion(): string {
  let dir = path.dirname(createRequire(import.meta.url).resolve(PACKAGE_NAME));
  while (dir !== path.dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === PACKAGE_NAME) return manifest.version ?? 'unknown';
    } catch {
      // not here: the folder above
    }
    dir = path.dirname(dir);
  }
  return 'unknown';
}

interface DraftedModel {
  id: string;
  price: DraftedPrice;
  comment: string;
}

function draftModel(entry: ModelToDraft, options: PriceDraftOptions): DraftedModel {
  const { prices, highestOfTimeOfDay } = pricesInForce(entry.model.prices as ModelInfo['prices'] as PackagePriceChoice[] | PackagePrices, options.at);
  const { price, notCarried } = draftPrice(prices, options);
  const notes = [entry.model.name ?? entry.model.id, `from ${entry.source}`];
  if (notCarried.length > 0) notes.push(`not carried (no tollroute unit): ${notCarried.join(', ')}`);
  if (highestOfTimeOfDay) notes.push('its prices vary by time of day: the highest of them');
  return { id: entry.id, price, comment: notes.join('; ') };
}

/** The draft as a YAML document: a header saying where the prices came from, then `models:`. */
export async function priceDraftYaml(options: PriceDraftOptions, now = new Date()): Promise<string> {
  const all = await waitForUpdate();
  if (!all) throw new Error(`${PACKAGE_NAME} has no price data`);
  const providers = chosenProviders(all, options.providers);
  let entries: ModelToDraft[];
  let missing: string[] = [];
  if (options.config) {
    ({ found: entries, missing } = matchConfigured(
      configuredModels(options.config),
      providers === all ? [] : providers.map((provider) => provider.id),
      options.model,
    ));
  } else entries = providerModels(providers, options.model);

  const drafted = entries.map((entry) => draftModel(entry, options));
  const priced = drafted.filter((model) => Object.keys(model.price).length > 0);
  // An empty price would make a model free: those are named, never listed.
  const unpriced = drafted.filter((model) => Object.keys(model.price).length === 0).map((model) => model.id);

  const header = [
    ` Drafted by \`tollroute prices draft\` on ${now.toISOString().slice(0, 10)} from ${PACKAGE_NAME} ${packageVersion()},`,
    ` with the prices in force on ${options.at.toISOString()}, in US dollars, at ${options.microsPerUsd} micros per dollar,`,
    ` with a markup of ${options.markup.text}% (each price rounded up once to a whole micro).`,
    ' Token prices are micros per million tokens; call, web_search and second are micros per unit.',
    ' A tier lists every price in force past its above_input_tokens.',
    ' Review before pasting under `models:` in tollroute.yaml: this draft changes no price by itself.',
  ];
  if (options.config) header.push(` Only the models configured in ${options.config}, under their configured ids.`);
  if (missing.length > 0) header.push(` Not found in the price data: ${missing.join(', ')}.`);
  if (unpriced.length > 0) header.push(` Left out, with no price tollroute can carry (none given, or only in units it has none for): ${unpriced.join(', ')}.`);

  const doc = new Document({ models: Object.fromEntries(priced.map((model) => [model.id, { price: model.price }])) });
  doc.commentBefore = header.join('\n');
  const models = doc.get('models') as YAMLMap<Scalar, unknown>;
  models.items.forEach((pair: Pair<Scalar, unknown>, i) => {
    pair.key.commentBefore = ` ${priced[i]!.comment}`;
  });
  return String(doc);
}
