// Chat models as the Gemini API lists them (`models.list`, `models.get` of Google's SDK).
import type { ModelConfig } from '../../config/schema.js';

export const GEMINI_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];

export const geminiModelOf = ({ id, config }: { id: string; config: ModelConfig }) => ({
  name: `models/${id}`,
  baseModelId: id,
  version: '1',
  displayName: id,
  outputTokenLimit: config.max_output_tokens,
  inputTokenLimit: config.context_window,
  supportedGenerationMethods: GEMINI_METHODS,
});

/** The Gemini API's own key header: a caller that sends it reads GET /v1/models in the Gemini API's shape. */
export const asksForGeminiShape = (headers: Record<string, unknown>): boolean => headers['x-goog-api-key'] !== undefined;
