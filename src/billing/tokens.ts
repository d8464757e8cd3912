// Prompt and output counts made by the gateway itself, with a real tokenizer (gpt-tokenizer's
// byte-pair encodings). They size holds, bill a stream the caller left when the upstream gave no
// usage, and fill the messages stream's input count. The upstream's own count, when it sends one,
// always wins for billing.
import { createRequire } from 'node:module';

/**
 * The encodings a model may name in config (`tokenizer:`). `o200k_base` (GPT-4o and later) is also
 * the documented fallback for families without a public tokenizer (Claude, most open models):
 * close for English and code, within a few percent elsewhere.
 */
export const TOKENIZERS = ['o200k_base', 'cl100k_base'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];
export const DEFAULT_TOKENIZER: TokenizerName = 'o200k_base';

type CountTokens = (text: string) => number;

// Loaded on first use (an encoding's tables take a fraction of a second to build), then kept.
const require = createRequire(import.meta.url);
const loaded = new Map<TokenizerName, CountTokens>();

function encoding(name: TokenizerName): CountTokens {
  let count = loaded.get(name);
  if (!count) {
    count = (require(`gpt-tokenizer/encoding/${name}`) as { countTokens: CountTokens }).countTokens;
    loaded.set(name, count);
  }
  return count;
}

/** Builds the named encodings now, so the first call that counts with one does not pay for it. */
export function loadTokenizers(names: Iterable<TokenizerName>): void {
  for (const name of new Set(names)) encoding(name);
}

export function countTokens(text: string, tokenizer: TokenizerName = DEFAULT_TOKENIZER): number {
  return text.length === 0 ? 0 : encoding(tokenizer)(text);
}
