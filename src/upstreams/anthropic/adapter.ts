// Anthropic Messages as the pivot's upstream: requests written by to-upstream.ts, answers read by
// from-upstream.ts. Same-format calls (messages in) never come here: they pass through (client.ts).
import { postForText, postJson } from '../http.js';
import type { PivotUpstreamAdapter } from '../pivot-adapter.js';
import { anthropicHeaders } from './client.js';
import { MessagesStreamDecoder, pivotResponseOfMessage } from './from-upstream.js';
import { messagesRequestOf } from './to-upstream.js';

export const anthropicAdapter: PivotUpstreamAdapter = {
  async complete(upstream, request, signal) {
    const text = await postForText(upstream, { path: '/v1/messages', body: messagesRequestOf(request), headers: anthropicHeaders(upstream), signal });
    return pivotResponseOfMessage(JSON.parse(text));
  },
  async openStream(upstream, request, signal) {
    const response = await postJson(upstream, { path: '/v1/messages', body: messagesRequestOf(request), headers: anthropicHeaders(upstream), signal });
    return { body: response.body, decoder: new MessagesStreamDecoder() };
  },
};
