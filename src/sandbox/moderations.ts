// OpenAI moderations (`POST /v1/moderations`): one result per input string (a multimodal array is
// one input), a pure function of its text. A category is flagged when the text holds its marker word
// (`hate`, `kill`…), scored 0.9 and a little more; every other score is small and drawn from a hash
// of the text and the category, so each text always gets the same numbers.
import { createHash } from 'node:crypto';
import { hasBearer, openAiError, openAiErrorForStatus, UNAUTHORIZED } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { hashOf, isRecord, words } from './text.js';

/** OpenAI's categories, each with the sandbox's marker word and the input types it applies to. */
const CATEGORIES: Record<string, { marker: string; images: boolean }> = {
  harassment: { marker: 'harass', images: false },
  'harassment/threatening': { marker: 'threaten', images: false },
  hate: { marker: 'hate', images: false },
  'hate/threatening': { marker: 'exterminate', images: false },
  illicit: { marker: 'steal', images: false },
  'illicit/violent': { marker: 'bomb', images: false },
  'self-harm': { marker: 'self-harm', images: true },
  'self-harm/intent': { marker: 'suicide', images: true },
  'self-harm/instructions': { marker: 'overdose', images: true },
  sexual: { marker: 'nsfw', images: true },
  'sexual/minors': { marker: 'minors', images: false },
  violence: { marker: 'kill', images: true },
  'violence/graphic': { marker: 'gore', images: true },
};

interface Input {
  text: string;
  hasImage: boolean;
}

/** A string, strings, or one multimodal array of text and image_url items; or why it is none of them. */
function inputsOf(input: unknown): Input[] | string {
  const invalid = 'input: expected a string, an array of strings, or an array of {type:"text"} and {type:"image_url"} items';
  if (typeof input === 'string') return [{ text: input, hasImage: false }];
  if (!Array.isArray(input) || input.length === 0) return invalid;
  if (input.every((item) => typeof item === 'string')) return (input as string[]).map((text) => ({ text, hasImage: false }));
  const texts: string[] = [];
  let hasImage = false;
  for (const item of input) {
    if (isRecord(item) && item.type === 'text' && typeof item.text === 'string') texts.push(item.text);
    else if (isRecord(item) && item.type === 'image_url' && isRecord(item.image_url) && typeof item.image_url.url === 'string') hasImage = true;
    else return invalid;
  }
  return [{ text: texts.join(' '), hasImage }];
}

/** A number in [0, 1) from the text and the category: the same text always scores the same. */
function fraction(text: string, category: string): number {
  return createHash('sha256').update(`${category}\n${text}`).digest().readUInt32LE(0) / 2 ** 32;
}

/** The sandbox's verdict on one input. */
export function moderationResult({ text, hasImage }: Input) {
  const lower = words(text.toLowerCase());
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const appliedTo: Record<string, string[]> = {};
  for (const [name, { marker, images }] of Object.entries(CATEGORIES)) {
    const flagged = lower.some((word) => word.replace(/[^a-z-]/g, '').startsWith(marker));
    categories[name] = flagged;
    // rounded to 6 places, as a JSON number reads back exactly
    scores[name] = Math.round((flagged ? 0.9 + fraction(text, name) / 10 : fraction(text, name) / 100) * 1e6) / 1e6;
    appliedTo[name] = hasImage && images ? ['text', 'image'] : ['text'];
  }
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores, category_applied_input_types: appliedTo };
}

export const moderationsRoute: SandboxRoute = {
  kind: 'moderations',
  method: 'POST',
  path: '/v1/moderations',
  errorBody: openAiErrorForStatus,
  handle(ctx: SandboxContext) {
    if (!hasBearer(ctx.headers)) return ctx.reply.json(401, UNAUTHORIZED);
    const body = ctx.body;
    if (!isRecord(body)) return ctx.reply.json(400, openAiError('body: expected a JSON object', 'invalid_request_error'));
    const model = typeof body.model === 'string' && body.model !== '' ? body.model : 'omni-moderation-latest';
    const inputs = inputsOf(body.input);
    if (typeof inputs === 'string') return ctx.reply.json(400, openAiError(inputs, 'invalid_request_error'));
    const hash = hashOf(body);
    ctx.reply.json(200, { id: `modr-${hash}`, model, results: inputs.map(moderationResult) }, { 'x-request-id': `req_${hash}` });
  },
};
