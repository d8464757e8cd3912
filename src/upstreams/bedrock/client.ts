// Bedrock Converse as the pivot's upstream: requests written by to-upstream.ts, signed by signing.ts,
// answers read by from-upstream.ts and stream.ts.
import type { PivotRequest } from '../../pivot/types.js';
import { postForText, postJson } from '../http.js';
import type { PivotUpstreamAdapter } from '../pivot-adapter.js';
import type { Upstream } from '../pool.js';
import { pivotResponseOf } from './from-upstream.js';
import { signedHeaders } from './signing.js';
import { ConverseStreamDecoder } from './stream.js';
import { converseRequestOf } from './to-upstream.js';
import type { ConverseRequest } from './types.js';

export const bedrockAdapter: PivotUpstreamAdapter = {
  async complete(upstream, request, signal) {
    const text = await postForText(upstream, { ...(await signedCall(upstream, request, 'converse')), signal });
    return pivotResponseOf(JSON.parse(text));
  },
  async openStream(upstream, request, signal) {
    const response = await postJson(upstream, { ...(await signedCall(upstream, request, 'converse-stream')), signal });
    return { body: response.body, decoder: new ConverseStreamDecoder() };
  },
};

/** `path` relative to the channel's base path, as postJson and postForText take it. */
async function signedCall(upstream: Upstream, request: PivotRequest, action: 'converse' | 'converse-stream') {
  const body: ConverseRequest = converseRequestOf(request);
  // model ids and ARNs hold `:` and `/`: escaped once here, the signer escapes its own copy again
  const path = `/model/${encodeURIComponent(request.model)}/${action}`;
  // postJson and postForText send JSON.stringify(body): the same object gives the same text, so the
  // signature covers exactly the bytes sent (without a raw-body variant of either)
  const headers = await signedHeaders(upstream.channel, { path: upstream.basePath + path, body: JSON.stringify(body) });
  return { path, body, headers };
}
