// Gemini (the Gemini API or Vertex AI) as the pivot's upstream: requests written by to-upstream.ts,
// answers read by from-upstream.ts. Gemini API calls on a gemini channel never come here: they pass
// through (native.ts).
import { postForText, postJson } from '../http.js';
import type { PivotUpstreamAdapter } from '../pivot-adapter.js';
import { geminiAuthHeaders, geminiPath } from './endpoint.js';
import { pivotResponseOf } from './from-upstream.js';
import { GeminiSseDecoder } from './stream.js';
import { geminiRequestOf } from './to-upstream.js';

export const geminiAdapter: PivotUpstreamAdapter = {
  async complete(upstream, request, signal) {
    const headers = await geminiAuthHeaders(upstream);
    const text = await postForText(upstream, { path: geminiPath(upstream, request.model, 'generateContent'), body: geminiRequestOf(request), headers, signal });
    return pivotResponseOf(JSON.parse(text));
  },
  async openStream(upstream, request, signal) {
    const headers = await geminiAuthHeaders(upstream);
    const response = await postJson(upstream, {
      path: geminiPath(upstream, request.model, 'streamGenerateContent'),
      body: geminiRequestOf(request),
      headers,
      signal,
    });
    return { body: response.body, decoder: new GeminiSseDecoder() };
  },
};
