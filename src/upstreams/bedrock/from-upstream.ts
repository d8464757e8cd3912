// A Converse answer read into the pivot; the stream's frames are read by stream.ts with the same maps. Pure.
import type { PivotFinish, PivotResponse, PivotUsage } from '../../pivot/types.js';
import type { ContentBlock, ConverseResponse, TokenUsage } from './types.js';

const FINISH: Record<string, PivotFinish> = {
  end_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  stop_sequence: 'stop_sequence',
  guardrail_intervened: 'refusal',
  content_filtered: 'refusal',
};

export const finishOf = (reason: unknown): PivotFinish => FINISH[typeof reason === 'string' ? reason : ''] ?? 'stop';

/**
 * Bedrock's inputTokens counts only the prompt tokens neither read from nor written to the cache; the
 * cached ones come beside it (AWS's prompt caching guide: total input = inputTokens + cacheReadInputTokens
 * + cacheWriteInputTokens). The pivot's input is the whole prompt.
 */
export function pivotUsageOf(usage: TokenUsage): PivotUsage {
  const cacheRead = usage.cacheReadInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteInputTokens ?? 0;
  // reasoning is not told apart: Bedrock's outputTokens already counts it
  const pivot: PivotUsage = { input: (usage.inputTokens ?? 0) + cacheRead + cacheWrite, output: usage.outputTokens ?? 0 };
  if (cacheRead > 0) pivot.cacheRead = cacheRead;
  if (cacheWrite > 0) pivot.cacheWrite = cacheWrite;
  return pivot;
}

export function pivotResponseOf(response: ConverseResponse): PivotResponse {
  const answer: PivotResponse = { text: '', toolCalls: [], finish: finishOf(response.stopReason) };
  const blocks: ContentBlock[] = Array.isArray(response.output?.message?.content) ? response.output.message.content : [];
  for (const block of blocks) {
    if (typeof block.text === 'string') answer.text += block.text;
    else if (block.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      answer.toolCalls.push({ id: toolUseId, name, arguments: JSON.stringify(input ?? {}) });
    } else if (block.reasoningContent?.reasoningText) {
      const { text, signature } = block.reasoningContent.reasoningText;
      answer.reasoning ??= [];
      answer.reasoning.push({ text, ...(signature !== undefined && { signature }) });
    }
    // redacted reasoning has no pivot form: it is the provider's, and the caller could not read it
  }
  if (response.usage) answer.usage = pivotUsageOf(response.usage);
  // Converse does not say which stop sequence matched, so stopSequence stays unset
  return answer;
}
