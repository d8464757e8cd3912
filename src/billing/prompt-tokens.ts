// Counting everything a request carries as input (DESIGN §3): message text, system text, tool
// definitions and calls, structured-output schemas, and images at the model's per-image rate.
import { countPromptTokens, knownPromptTokens, type TokenizerName } from './tokens.js';

export interface PromptCounting {
  tokenizer: TokenizerName;
  /** Input tokens an image part counts for (the model's per-image rate). */
  imageTokens: number;
  /**
   * When present, texts of LONG_TEXT_CHARS or more not yet remembered are left here, counted as 0,
   * for the caller to count off the event loop (estimates.ts, token-worker.ts).
   */
  longTexts?: string[];
}

/** A few milliseconds of the tokenizer's CPU: longer texts are worth a trip to the token worker. */
export const LONG_TEXT_CHARS = 32_768;

/** A text's tokens, or 0 when it is left in `longTexts` to be counted elsewhere. */
function textTokens(text: string, counting: PromptCounting): number {
  if (counting.longTexts && text.length >= LONG_TEXT_CHARS) {
    const known = knownPromptTokens(text, counting.tokenizer);
    if (known !== undefined) return known;
    counting.longTexts.push(text);
    return 0;
  }
  return countPromptTokens(text, counting.tokenizer);
}

// Chat formats add a few tokens per message for the role and framing, and a few to prime the reply.
const PER_MESSAGE = 4;
const PRIMING = 3;

const IMAGE_PART_TYPES = new Set(['image_url', 'image', 'input_image']);
// Fields that frame a part rather than carry input the model reads.
const FRAMING_KEYS = new Set(['type', 'role', 'cache_control', 'id', 'tool_call_id', 'tool_use_id', 'call_id', 'detail', 'status']);

/**
 * Tokens of any request value: strings through the tokenizer, image parts at the image rate,
 * objects by their fields (framing fields skipped), arrays by their items.
 */
export function valueTokens(value: unknown, counting: PromptCounting): number {
  if (typeof value === 'string') return textTokens(value, counting);
  if (typeof value === 'number' || typeof value === 'boolean') return 1;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + valueTokens(item, counting), 0);
  if (value === null || typeof value !== 'object') return 0;
  const record = value as Record<string, unknown>;
  if (typeof record.type === 'string' && IMAGE_PART_TYPES.has(record.type)) return counting.imageTokens;
  // Gemini's media parts have no type: inline bytes or a file, held for at the image rate too
  if (record.inlineData !== undefined || record.fileData !== undefined) return counting.imageTokens;
  let total = 0;
  // for…in, not Object.entries: no array of pairs per object on every call (parsed JSON has no inherited keys)
  for (const key in record) if (!FRAMING_KEYS.has(key)) total += valueTokens(record[key], counting);
  return total;
}

/** Tool and schema definitions are read by the model as JSON text. */
const jsonTokens = (value: unknown, counting: PromptCounting) => (value === undefined || value === null ? 0 : textTokens(JSON.stringify(value), counting));

/** A chat-completions or messages conversation: each message's content plus its framing. */
export function conversationTokens(messages: unknown[], counting: PromptCounting): number {
  let total = PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE;
    if (message && typeof message === 'object') {
      const { tool_calls, ...rest } = message as Record<string, unknown>;
      total += valueTokens(rest, counting) + jsonTokens(tool_calls, counting);
    } else total += valueTokens(message, counting);
  }
  return total;
}

/** Definitions that travel beside the conversation: tools, tool choice, response schemas. */
export function definitionTokens(definitions: unknown[], counting: PromptCounting): number {
  return definitions.reduce((sum: number, definition) => sum + jsonTokens(definition, counting), 0);
}
