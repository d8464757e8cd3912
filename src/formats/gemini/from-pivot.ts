// A pivot answer written as a Gemini generateContent response (provider-formats.md), for a Gemini
// API caller whose model is on another kind of upstream. Pure: the response id is the caller's.
import type { PivotFinish, PivotResponse, PivotToolCall, PivotUsage } from '../../pivot/types.js';
import type { FinishReason, GenerateContentResponse, Part, UsageMetadata } from '../../upstreams/gemini/types.js';

export interface GeminiIds {
  /** The model id the caller named, written as `modelVersion`. */
  model: string;
  responseId: string;
}

/** Gemini has no finish of its own for tool calls or stop sequences: both are a plain STOP. */
export const FINISH: Record<PivotFinish, FinishReason> = {
  stop: 'STOP',
  stop_sequence: 'STOP',
  tool_calls: 'STOP',
  length: 'MAX_TOKENS',
  refusal: 'SAFETY',
};

/** Gemini counts thoughts apart from the candidates; the pivot's output holds both. */
export function usageMetadataOf(usage: PivotUsage): UsageMetadata {
  const reasoning = usage.reasoning ?? 0;
  return {
    promptTokenCount: usage.input,
    candidatesTokenCount: Math.max(usage.output - reasoning, 0),
    totalTokenCount: usage.input + usage.output,
    ...(usage.cacheRead ? { cachedContentTokenCount: usage.cacheRead } : {}),
    ...(reasoning ? { thoughtsTokenCount: reasoning } : {}),
  };
}

/** A reasoning block as a thought part; its provider's signature rides as `thoughtSignature`, and comes back that way. */
export function thoughtPartOf(reasoning: { text: string; signature?: string }): Part {
  return { text: reasoning.text, thought: true, ...(reasoning.signature && { thoughtSignature: reasoning.signature }) };
}

/**
 * Gemini's `args` is an object: arguments that are not a JSON object (a model that misbehaved, or
 * a call cut short) are sent as none rather than as text the caller cannot read.
 */
export function functionCallPartOf(call: PivotToolCall): Part {
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    args = undefined;
  }
  const object = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  // the id lets the caller's functionResponse name the very call it answers
  return { functionCall: { id: call.id, name: call.name, args: object } };
}

export function generateContentResponseOf(answer: PivotResponse, ids: GeminiIds): GenerateContentResponse {
  const parts: Part[] = (answer.reasoning ?? []).map(thoughtPartOf);
  if (answer.text !== '') parts.push({ text: answer.text });
  for (const call of answer.toolCalls) parts.push(functionCallPartOf(call));
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: FINISH[answer.finish], index: 0 }],
    ...(answer.usage && { usageMetadata: usageMetadataOf(answer.usage) }),
    modelVersion: ids.model,
    responseId: ids.responseId,
  };
}

export function countTokensResponseOf(totalTokens: number): { totalTokens: number } {
  return { totalTokens };
}
