// Which of the price data package's models a draft lists: every model of the providers asked for,
// or, given a tollroute.yaml, the models configured there found by the names they call upstream.
import { readFileSync } from 'node:fs';
import { calcPrice, type ModelInfo, type Provider } from '@pydantic/genai-prices';
import { parse as parseYaml } from 'yaml';

export interface ModelToDraft {
  /** The id it is drafted under: the configured id, else the package's. */
  id: string;
  provider: Provider;
  model: ModelInfo;
  /** How it was found, for the comment above it. */
  source: string;
}

/** A `--model` pattern: `*` stands for any run of characters; without one, any id containing it. */
export function modelPattern(pattern: string | undefined): (id: string) => boolean {
  if (!pattern) return () => true;
  const escaped = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const regex = new RegExp(pattern.includes('*') ? `^${escaped}$` : escaped, 'i');
  return (id) => regex.test(id);
}

/** The providers asked for by id, in the order asked; an unknown id is an error naming the known ones. */
export function chosenProviders(all: Provider[], ids: string[]): Provider[] {
  if (ids.length === 0) return all;
  return ids.map((id) => {
    const found = all.find((provider) => provider.id === id.toLowerCase());
    if (!found) throw new Error(`no provider "${id}" in the price data (its providers: ${all.map((p) => p.id).join(', ')})`);
    return found;
  });
}

/**
 * Every model of the providers, under `<provider>/<model>` when several providers are drafted
 * (their model ids overlap) and the model's own id when one is. A repeated id in one provider is
 * passed over: the package itself always finds the first.
 */
export function providerModels(providers: Provider[], pattern: string | undefined): ModelToDraft[] {
  const wanted = modelPattern(pattern);
  const drafted: ModelToDraft[] = [];
  for (const provider of providers) {
    const seen = new Set<string>();
    for (const model of provider.models) {
      if (seen.has(model.id) || !wanted(model.id)) continue;
      seen.add(model.id);
      const id = providers.length === 1 ? model.id : `${provider.id}/${model.id}`;
      drafted.push({ id, provider, model, source: `${provider.id}/${model.id}${model.deprecated ? ' (deprecated)' : ''}` });
    }
  }
  return drafted;
}

// The package's provider for the upstream a channel kind speaks to.
const PROVIDER_FOR_KIND: Record<string, string> = { openai: 'openai', azure: 'azure', anthropic: 'anthropic', gemini: 'google', bedrock: 'aws' };

interface ConfiguredModel {
  id: string;
  /** The names it is called upstream, first the one to look for first; the id last. */
  names: string[];
  channelKind?: string;
}

const mapping = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The models of a tollroute.yaml, read as written (no environment needed, nothing validated or written). */
export function configuredModels(file: string): ConfiguredModel[] {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
  const channels = mapping(mapping(raw).channels);
  return Object.entries(mapping(mapping(raw).models)).map(([id, value]) => {
    const model = mapping(value);
    const routes = Array.isArray(model.channels) ? model.channels.map(mapping) : [];
    const names = [text(model.upstream_model), ...routes.map((route) => text(route.upstream_model)), id].filter((name) => name !== undefined);
    const channel = text(model.channel) ?? text(routes[0]?.channel);
    const kind = channel === undefined ? undefined : text(mapping(channels[channel]).kind);
    return { id, names: [...new Set(names)], ...(kind !== undefined && { channelKind: kind }) };
  });
}

/**
 * The configured models the package knows, each found by its upstream names (then its id) with the
 * package's own matching: among the providers asked for, else the channel kind's provider, else any.
 */
export function matchConfigured(
  configured: ConfiguredModel[],
  providerIds: string[],
  pattern: string | undefined,
): { found: ModelToDraft[]; missing: string[] } {
  const wanted = modelPattern(pattern);
  const found: ModelToDraft[] = [];
  const missing: string[] = [];
  for (const model of configured.filter((entry) => wanted(entry.id))) {
    const kindProvider = model.channelKind === undefined ? undefined : PROVIDER_FOR_KIND[model.channelKind];
    const providers: (string | undefined)[] = providerIds.length > 0 ? providerIds : [...(kindProvider ? [kindProvider] : []), undefined];
    const match = firstMatch(model.names, providers);
    if (match) found.push({ id: model.id, ...match });
    else missing.push(model.id);
  }
  return { found, missing };
}

function firstMatch(names: string[], providerIds: (string | undefined)[]): Omit<ModelToDraft, 'id'> | undefined {
  for (const name of names) {
    for (const providerId of providerIds) {
      let result: ReturnType<typeof calcPrice> = null;
      try {
        result = calcPrice({}, name, providerId === undefined ? {} : { providerId });
      } catch {
        // A package entry it cannot price is one it cannot draft either: try the next.
      }
      if (result) return { provider: result.provider, model: result.model, source: `${result.provider.id}/${result.model.id}, for "${name}"` };
    }
  }
  return undefined;
}
