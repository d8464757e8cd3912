// OpenAI-style chat completions (and Azure OpenAI) as the pivot's upstream: requests written by
// to-upstream.ts, answers read by from-upstream.ts; the HTTP is the pass-through's own client.
import type { PivotUpstreamAdapter } from '../pivot-adapter.js';
import { chatCompletionWithText, openChatStream } from './client.js';
import { ChatStreamDecoder, pivotResponseOfChat } from './from-upstream.js';
import { chatRequestOf } from './to-upstream.js';

export const openAiChatAdapter: PivotUpstreamAdapter = {
  async complete(upstream, request, signal) {
    const { completion } = await chatCompletionWithText(upstream, chatRequestOf(request), signal);
    return pivotResponseOfChat(completion);
  },
  async openStream(upstream, request, signal) {
    const body = await openChatStream(upstream, chatRequestOf(request), signal);
    return { body, decoder: new ChatStreamDecoder() };
  },
};
