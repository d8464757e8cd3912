// What an images call is held for and billed on, the async task's and the answered-at-once ones':
// per image, and per token too for models that report tokens (gpt-image-*).
import type { Units } from '../../billing/prices.js';
import { countTokens } from '../../billing/tokens.js';
import type { ModelConfig } from '../../config/schema.js';
import type { ImagesResult } from './client.js';

/**
 * The hold: `n` images, and for per-token models the prompt, each image sent to edit (at the
 * model's `image_input_tokens`) and each image's output at the model's output maximum, so the hold
 * covers either way of pricing.
 */
export function imagesEstimate(request: { prompt: string; n?: number }, model: ModelConfig, inputImages = 0): Units {
  const n = request.n ?? 1;
  return {
    image: n,
    input_token: countTokens(request.prompt, model.tokenizer) + inputImages * model.image_input_tokens,
    output_token: n * model.max_output_tokens,
  };
}

/** The bill: the images the upstream answered, and the tokens it reported when it did. */
export function imagesUnits(result: ImagesResult): Units {
  const units: Units = { image: result.data.length };
  if (result.usage) Object.assign(units, { input_token: result.usage.input_tokens ?? 0, output_token: result.usage.output_tokens ?? 0 });
  return units;
}
