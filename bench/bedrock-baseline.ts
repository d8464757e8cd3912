// The upstream call the gateway makes for a chat stream on the Bedrock channel, signed for the
// sandbox once at the start of a run: direct and floor then send the very request the gateway
// sends (the sandbox checks the signature, and not the clock, so one signature serves the run).
import { sandboxCatalogue } from '../src/config/sandbox-catalogue.js';
import { ChannelSchema } from '../src/config/schema.js';
import { pivotRequestOfChat } from '../src/formats/chat/to-pivot.js';
import { signedHeaders } from '../src/upstreams/bedrock/signing.js';
import { converseRequestOf } from '../src/upstreams/bedrock/to-upstream.js';
import type { BenchRequest } from './scenarios.js';

/** The sandbox catalogue's output cap, which the gateway sends when the chat request names none. */
const MODEL_MAX_OUTPUT_TOKENS = 4096;

export async function signedBedrockBaseline(sandboxUrl: string, chatBody: string): Promise<BenchRequest> {
  const channel = ChannelSchema.parse(sandboxCatalogue(sandboxUrl).channels?.['sandbox-bedrock']);
  const pivot = pivotRequestOfChat(JSON.parse(chatBody), { upstreamModel: 'sandbox-bedrock' });
  pivot.maxTokens ??= MODEL_MAX_OUTPUT_TOKENS;
  const path = '/model/sandbox-bedrock/converse-stream';
  const body = JSON.stringify(converseRequestOf(pivot));
  const { host, ...signed } = await signedHeaders(channel, { path, body });
  // `Host` as the load generators spell it, so theirs is replaced, and the floor passes the signed one on
  return { method: 'POST', path, headers: { ...signed, Host: host as string }, body, endMarker: 'metadata' };
}
