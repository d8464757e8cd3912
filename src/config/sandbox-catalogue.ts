// The built-in configuration: every model of DESIGN section 9, served by the sandbox upstream.
import { SANDBOX_AWS_CREDENTIALS } from '../sandbox/bedrock-credentials.js';
import { sandboxServiceAccount } from '../sandbox/vertex-account.js';
import type { ConfigInput } from './schema.js';

const SANDBOX_KEY = 'sk-sandbox';

export function sandboxCatalogue(sandboxUrl: string): Pick<ConfigInput, 'channels' | 'models'> {
  const channel = (kind: NonNullable<ConfigInput['channels']>[string]['kind'], path = '') => ({
    kind,
    base_url: `${sandboxUrl}${path}`,
    api_key: SANDBOX_KEY,
  });
  const chatPrice = { input_token: 2_000_000, output_token: 8_000_000 }; // 2 and 8 micros a token
  return {
    channels: {
      'sandbox-openai': channel('openai'),
      // Same chat protocol, but this upstream answers 404 to the responses API.
      'sandbox-openai-noresponses': channel('openai', '/noresponses'),
      'sandbox-anthropic': channel('anthropic'),
      // Azure OpenAI's deployment paths: the deployment is the model's upstream id.
      'sandbox-azure': { ...channel('azure'), api_version: '2024-10-21' },
      // Bedrock Converse, SigV4 signed with the only credentials the sandbox accepts.
      'sandbox-bedrock': {
        kind: 'bedrock',
        base_url: sandboxUrl,
        region: 'us-east-1',
        access_key_id: SANDBOX_AWS_CREDENTIALS.accessKeyId,
        secret_access_key: SANDBOX_AWS_CREDENTIALS.secretAccessKey,
      },
      'sandbox-gemini': channel('gemini'),
      // Vertex AI: the sandbox's own service account, its tokens from the sandbox's token endpoint.
      'sandbox-vertex': {
        kind: 'gemini',
        base_url: sandboxUrl,
        vertex: { project: 'sandbox-project', region: 'us-central1', service_account_json: JSON.stringify(sandboxServiceAccount(`${sandboxUrl}/token`)) },
      },
      'sandbox-speech': { ...channel('speech'), app_id: 'sandbox-app', resource_id: 'volc.service_type.10029' },
      'sandbox-search': channel('search'),
      'sandbox-ark': channel('ark'),
      'sandbox-minutes': channel('minutes'),
      'sandbox-erase': channel('erase'),
      'sandbox-ast': { ...channel('ast'), app_id: 'sandbox-app', resource_id: 'volc.service_type.10053' },
    },
    models: {
      'sandbox-chat': { type: 'chat', channel: 'sandbox-openai', price: chatPrice, batch_discount: 50 },
      'sandbox-chat-noresponses': { type: 'chat', channel: 'sandbox-openai-noresponses', upstream_model: 'sandbox-chat', price: chatPrice },
      'sandbox-claude': { type: 'chat', channel: 'sandbox-anthropic', price: chatPrice },
      'sandbox-azure': { type: 'chat', channel: 'sandbox-azure', price: chatPrice },
      'sandbox-bedrock': { type: 'chat', channel: 'sandbox-bedrock', price: chatPrice },
      'sandbox-gemini': { type: 'chat', channel: 'sandbox-gemini', price: chatPrice },
      'sandbox-vertex': { type: 'chat', channel: 'sandbox-vertex', price: chatPrice },
      // Embeddings on each kind that serves them: OpenAI's call, Azure's deployment path, Gemini's embedContent.
      'sandbox-embedding': { type: 'embedding', channel: 'sandbox-openai', price: { input_token: 100_000 }, batch_discount: 50 },
      'sandbox-embedding-azure': { type: 'embedding', channel: 'sandbox-azure', upstream_model: 'sandbox-embedding', price: { input_token: 100_000 } },
      'sandbox-embedding-gemini': { type: 'embedding', channel: 'sandbox-gemini', upstream_model: 'sandbox-embedding', price: { input_token: 100_000 } },
      'sandbox-transcribe': { type: 'transcription', channel: 'sandbox-openai', price: { second: 100 } },
      'sandbox-moderation': { type: 'moderation', channel: 'sandbox-openai', price: { call: 0 } },
      'sandbox-rerank': { type: 'rerank', channel: 'sandbox-openai', price: { call: 1_000 } },
      'sandbox-tts': { type: 'tts', channel: 'sandbox-speech', price: { character: 100 } },
      'vendor-web-search': { type: 'search', channel: 'sandbox-search', price: { call: 5_000 } },
      'vendor-global-search': { type: 'search', channel: 'sandbox-search', search_edition: 'global', price: { call: 10_000 } },
      'vendor-minutes': { type: 'minutes', channel: 'sandbox-minutes', price: { second: 500 } },
      'service-minutes': { type: 'minutes', channel: 'sandbox-minutes', summary_model: 'sandbox-chat', price: { second: 300, ...chatPrice } },
      'sandbox-video': { type: 'video', channel: 'sandbox-ark', price: { second: 100_000 } },
      'sandbox-image': {
        type: 'image',
        channel: 'sandbox-openai',
        price: { image: 40_000 },
        image_prices: { '1024x1024': 40_000, '1024x1024/hd': 80_000, '1792x1024': 80_000, '1792x1024/hd': 120_000 },
      },
      'sandbox-ast': { type: 'ast', channel: 'sandbox-ast', price: { input_token: 3_000_000, output_token: 12_000_000 } },
      'sandbox-erase': { type: 'erase', channel: 'sandbox-erase', price: { second: 0 } },
    },
  };
}
