// Hold estimates made before the upstream is called. They only size the hold: settlement uses
// the upstream's real count, and a charge above the hold is still taken (DESIGN section 3).

/**
 * Prompt tokens, on the high side: about one token per 3 bytes of the messages' JSON (text
 * averages near 4), plus a few per message for roles and framing.
 */
export function estimatePromptTokens(messages: unknown): number {
  const text = JSON.stringify(messages ?? '');
  const count = Array.isArray(messages) ? messages.length : 1;
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 3) + 4 * count;
}

/** The output cap the request asked for (it goes upstream as asked), else the model's default cap. */
export function outputTokenCap(requested: number | null | undefined, modelCap: number): number {
  return typeof requested === 'number' && requested > 0 ? requested : modelCap;
}
