// What every upstream kind's writer (its to-upstream.ts) needs alike when it turns the pivot into
// its own request: tool-call arguments as a JSON object, and a thinking budget for an effort.
import { type PivotRequest, untranslatable } from '../pivot/types.js';

/** `text` parsed, when it is a JSON object; else undefined. */
export function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return undefined;
}

/**
 * A tool call's arguments as the object an upstream wants (empty arguments: a call without any); a
 * call whose arguments are not a JSON object cannot be sent back, and is refused.
 */
export function argumentsObjectOf(args: string, name: string, upstream = "this model's upstream"): Record<string, unknown> {
  if (args.trim() === '') return {};
  const value = jsonObjectOf(args);
  if (value) return value;
  throw untranslatable('tool_calls', `the arguments of the call to ${name} are not a JSON object, which ${upstream} requires`);
}

/** Thinking budgets for the pivot's effort levels; `minimal` is the kind's least (Anthropic's is 1 024, Gemini may turn thinking off). */
export function thinkingBudgetOf(reasoning: NonNullable<PivotRequest['reasoning']>, minimal = 1_024): number {
  if (reasoning.budgetTokens !== undefined) return reasoning.budgetTokens;
  const effort = reasoning.effort ?? 'medium';
  return effort === 'minimal' ? minimal : { low: 2_048, medium: 8_192, high: 24_576 }[effort];
}
