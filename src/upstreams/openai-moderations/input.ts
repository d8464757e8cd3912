// The forms of a moderation's `input`, checked before the schema, for messages naming the item at fault.
import { invalidRequest } from '../../errors.js';

const FORMS = 'expected a non-empty string, an array of strings, or an array of {type: "text", text} and {type: "image_url", image_url: {url}} items';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function isMultimodalItem(item: unknown): boolean {
  if (!isRecord(item)) return false;
  if (item.type === 'text') return typeof item.text === 'string';
  return item.type === 'image_url' && isRecord(item.image_url) && typeof item.image_url.url === 'string' && item.image_url.url !== '';
}

/** Throws a 400 naming `input` (or its item at fault) unless it is a string, strings, or multimodal items. */
export function requireModerationInput(input: unknown): void {
  if (typeof input === 'string') {
    if (input === '') throw invalidRequest(`input: ${FORMS}`);
    return;
  }
  if (input === undefined || input === null) throw invalidRequest(`input: required, ${FORMS}`);
  if (!Array.isArray(input) || input.length === 0) throw invalidRequest(`input: ${FORMS}`);
  const strings = typeof input[0] === 'string';
  const bad = input.findIndex((item) => (strings ? typeof item !== 'string' : !isMultimodalItem(item)));
  if (bad !== -1) throw invalidRequest(`input[${bad}]: ${FORMS}, not a mix`);
}
