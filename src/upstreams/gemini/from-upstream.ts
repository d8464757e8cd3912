// A Gemini generateContent answer read into the pivot (the Gemini API and Vertex AI alike). Pure.
import type { PivotFinish, PivotResponse, PivotUsage } from '../../pivot/types.js';
import type { GenerateContentResponse, ModalityTokenCount, Part, UsageMetadata } from './types.js';

/**
 * Output counts the answer and the thoughts alike (Gemini bills both as output). toolUsePromptTokenCount
 * is left out: it counts the prompts of Google's built-in tools, which a translated call never offers.
 */
export function pivotUsageOf(usage: UsageMetadata): PivotUsage {
  const thoughts = usage.thoughtsTokenCount ?? 0;
  const cached = usage.cachedContentTokenCount ?? 0;
  const pivot: PivotUsage = { input: usage.promptTokenCount ?? 0, output: (usage.candidatesTokenCount ?? 0) + thoughts };
  if (cached > 0) pivot.cacheRead = cached;
  if (thoughts > 0) pivot.reasoning = thoughts;
  const audioInput = modalityCount(usage.promptTokensDetails, 'AUDIO');
  if (audioInput > 0) pivot.audioInput = audioInput;
  const imageInput = modalityCount(usage.promptTokensDetails, 'IMAGE');
  if (imageInput > 0) pivot.imageInput = imageInput;
  const audioOutput = modalityCount(usage.candidatesTokensDetails, 'AUDIO');
  if (audioOutput > 0) pivot.audioOutput = audioOutput;
  return pivot;
}

const modalityCount = (details: ModalityTokenCount[] | undefined, modality: string): number =>
  Array.isArray(details) ? details.reduce((sum, d) => sum + (d?.modality === modality && typeof d.tokenCount === 'number' ? d.tokenCount : 0), 0) : 0;

/** The stops of Gemini's content filters, every one a refusal to the pivot. */
const REFUSALS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/** A turn that called functions is a tool turn, though Gemini says STOP for it. */
export function finishOf(reason: string, calledTools: boolean): PivotFinish {
  if (reason === 'MAX_TOKENS') return 'length';
  if (REFUSALS.has(reason)) return 'refusal';
  return calledTools ? 'tool_calls' : 'stop';
}

/** What one part says, in the pivot's terms: the stream decoder reads parts one chunk at a time the same way. */
export type PartReading =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; signature?: string }
  | { type: 'tool_call'; id?: string; name: string; arguments: string };

/**
 * A thought is reasoning; a signature on any other part (Gemini puts one on the first function call
 * of a thinking turn) is kept as reasoning without text, read before the part it came on, so it can
 * be sent back (to-upstream.ts puts it on the first call again).
 */
export function readPart(part: Part): PartReading[] {
  const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
  if (part.thought === true) return [{ type: 'reasoning', text: typeof part.text === 'string' ? part.text : '', ...(signature && { signature }) }];
  const readings: PartReading[] = signature ? [{ type: 'reasoning', text: '', signature }] : [];
  if (typeof part.text === 'string' && part.text !== '') readings.push({ type: 'text', text: part.text });
  const call = part.functionCall;
  if (call && typeof call.name === 'string') {
    readings.push({
      type: 'tool_call',
      ...(typeof call.id === 'string' && call.id !== '' && { id: call.id }),
      name: call.name,
      arguments: JSON.stringify(call.args ?? {}),
    });
  }
  return readings;
}

export function pivotResponseOf(response: GenerateContentResponse): PivotResponse {
  const candidate = response.candidates?.[0];
  const answer: PivotResponse = { text: '', toolCalls: [], finish: 'stop' };
  for (const part of candidate?.content?.parts ?? []) {
    for (const reading of readPart(part)) {
      if (reading.type === 'text') answer.text += reading.text;
      else if (reading.type === 'reasoning') {
        answer.reasoning ??= [];
        answer.reasoning.push({ text: reading.text, ...(reading.signature && { signature: reading.signature }) });
      } else answer.toolCalls.push({ id: reading.id ?? `call_${answer.toolCalls.length}`, name: reading.name, arguments: reading.arguments });
    }
  }
  // no candidate at all: the prompt itself was blocked (promptFeedback.blockReason says why)
  answer.finish = candidate ? finishOf(String(candidate.finishReason ?? 'STOP'), answer.toolCalls.length > 0) : 'refusal';
  if (typeof response.responseId === 'string') answer.id = response.responseId;
  if (response.usageMetadata) answer.usage = pivotUsageOf(response.usageMetadata);
  return answer;
}
