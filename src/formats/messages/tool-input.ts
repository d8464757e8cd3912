// A tool call's argument text as the `input` object of a Messages tool_use block.

/**
 * A tool input must be an object. Empty arguments mean a call without any (`{}`); text that is
 * not a JSON object is kept whole under `_raw` rather than lost, so the client can still see what
 * the model wrote and answer with an error result.
 */
export function toolInputOf(args: string | null | undefined): Record<string, unknown> {
  if (!args || args.trim() === '') return {};
  try {
    const input: unknown = JSON.parse(args);
    if (input !== null && typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>;
  } catch {
    // falls through to _raw
  }
  return { _raw: args };
}
