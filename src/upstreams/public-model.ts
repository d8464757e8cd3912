// An OpenAI-style answer as the caller sees it: `model` the public id, not the channel's. The
// upstream's own text with its model changed in place, so it is neither built nor serialized again;
// the object rebuilt only when the text cannot be changed in place.
import { JsonText, withTopLevelString } from '../json-text.js';

export function withPublicModel(text: string, answer: { model?: unknown } | null, publicModel: string): unknown {
  if (typeof answer === 'object' && answer !== null && typeof answer.model === 'string') {
    const renamed = answer.model === publicModel ? text : withTopLevelString(text, 'model', answer.model, publicModel);
    if (renamed !== undefined) return new JsonText(renamed);
  }
  return { ...answer, model: publicModel };
}
