// Where a Gemini call goes and how it authenticates. With an API key: the Gemini API's
// `/v1beta/models/{model}:{verb}` and `x-goog-api-key`. With `vertex`: Vertex AI's publisher-model
// path in the channel's project and region, with an OAuth token from the service account, made and
// refreshed by google-auth-library (one client per channel, so a token serves every call until
// shortly before it expires).
import { readFileSync } from 'node:fs';
import type { JWT } from 'google-auth-library';
import type { ChannelConfig } from '../../config/schema.js';
import type { Upstream } from '../pool.js';

export type GeminiVerb = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'embedContent' | 'batchEmbedContents';

const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
/** Where google-auth-library sends its JWT grant unless told otherwise. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** The path of a call, under the channel's base URL; a stream asks for SSE. */
export function geminiPath(upstream: Upstream, model: string, verb: GeminiVerb): string {
  const method = `${encodeURIComponent(model)}:${verb}${verb === 'streamGenerateContent' ? '?alt=sse' : ''}`;
  const vertex = upstream.channel.vertex;
  if (!vertex) return `/v1beta/models/${method}`;
  const { project, region } = vertex;
  return `/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}/publishers/google/models/${method}`;
}

interface ServiceAccount {
  client_email: string;
  private_key: string;
  token_uri?: string;
}

const tokenClients = new WeakMap<NonNullable<ChannelConfig['vertex']>, Promise<JWT>>();

/**
 * The account's own token endpoint (`token_uri`): google-auth-library posts its JWT grant to
 * Google's, so its transport is told to send that request to the account's instead (the same for a
 * real account, a private endpoint or the sandbox's).
 */
function tokenClientOf(vertex: NonNullable<ChannelConfig['vertex']>): Promise<JWT> {
  let client = tokenClients.get(vertex);
  if (!client) {
    client = newTokenClient(vertex);
    tokenClients.set(vertex, client);
  }
  return client;
}

/** google-auth-library loads with the first Vertex call, not with the gateway: most never make one. */
async function newTokenClient(vertex: NonNullable<ChannelConfig['vertex']>): Promise<JWT> {
  const { gaxios, JWT } = await import('google-auth-library');
  const text = vertex.service_account_json ?? readFileSync(vertex.service_account_file!, 'utf8');
  const account = JSON.parse(text) as ServiceAccount;
  const transporter = new gaxios.Gaxios();
  const tokenUri = account.token_uri;
  if (tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
    transporter.interceptors.request.add({
      resolved: async (config) => {
        if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(tokenUri);
        return config;
      },
    });
  }
  return new JWT({ email: account.client_email, key: account.private_key, scopes: [CLOUD_PLATFORM], transporter });
}

/** The headers that authenticate a call: the key, or a current OAuth token. */
export async function geminiAuthHeaders(upstream: Upstream): Promise<Record<string, string>> {
  const vertex = upstream.channel.vertex;
  if (!vertex) return upstream.channel.api_key ? { 'x-goog-api-key': upstream.channel.api_key } : {};
  const { token } = await (await tokenClientOf(vertex)).getAccessToken();
  if (!token) throw new Error('the Vertex AI service account gave no access token');
  return { authorization: `Bearer ${token}` };
}
