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

// Prompts repeat from call to call: a system prompt in every call, a conversation's history again at
// each turn. Their counts are kept per encoding, so a text already seen costs a map lookup instead
// of a byte-pair encoding. Bounded by the characters kept (4 M per encoding: 4 to 8 MB of strings),
// the oldest forgotten first; a text longer than a tenth of that is counted each time, not kept.
// Outputs are counted with countTokens: they seldom repeat and would only push prompts out.
const CACHED_PROMPT_CHARS = 4_000_000;

/** Token counts of recent prompt texts, oldest first. */
export class PromptCountCache {
  private readonly counts = new Map<string, number>();
  private chars = 0;

  constructor(private readonly maxChars = CACHED_PROMPT_CHARS) {}

  count(text: string, countText: CountTokens): number {
    return this.known(text) ?? this.keep(text, countText(text));
  }

  /** The text's count, when it is kept. */
  known(text: string): number | undefined {
    return this.counts.get(text);
  }

  /** Keeps a count made elsewhere (billing/token-worker.ts), within the bound; returns it. Two counts of one text may race there. */
  remember(text: string, count: number): number {
    return this.counts.has(text) ? count : this.keep(text, count);
  }

  /** Keeps the count of a text not kept yet, within the bound; returns it. */
  private keep(text: string, count: number): number {
    if (text.length > this.maxChars / 10) return count;
    this.counts.set(text, count);
    this.chars += text.length;
    while (this.chars > this.maxChars) {
      const oldest = this.counts.keys().next().value as string;
      this.counts.delete(oldest);
      this.chars -= oldest.length;
    }
    return count;
  }

  get size(): number {
    return this.counts.size;
  }
}

const promptCaches = new Map<TokenizerName, PromptCountCache>();

function promptCache(tokenizer: TokenizerName): PromptCountCache {
  let cache = promptCaches.get(tokenizer);
  if (!cache) {
    cache = new PromptCountCache();
    promptCaches.set(tokenizer, cache);
  }
  return cache;
}

/** countTokens for prompt texts, which repeat: remembered per encoding (PromptCountCache). */
export function countPromptTokens(text: string, tokenizer: TokenizerName = DEFAULT_TOKENIZER): number {
  if (text.length === 0) return 0;
  return promptCache(tokenizer).count(text, encoding(tokenizer));
}

/** A prompt text's count when it is remembered, without counting it. */
export const knownPromptTokens = (text: string, tokenizer: TokenizerName): number | undefined => promptCache(tokenizer).known(text);

/** Remembers a prompt text's count made elsewhere (billing/token-worker.ts); returns it. */
export const rememberPromptTokens = (text: string, tokenizer: TokenizerName, count: number): number => promptCache(tokenizer).remember(text, count);
