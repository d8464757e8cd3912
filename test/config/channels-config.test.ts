// A model over several channels in the configuration: the list form beside the single `channel:`
// form, several keys per channel, and mistakes refused naming the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig } from '../../src/config/load.js';
import { modelRoutes } from '../../src/config/schema.js';

const channels = {
  a: { kind: 'openai' as const, base_url: 'http://127.0.0.1:9001', api_keys: ['k1', 'k2'] },
  b: { kind: 'openai' as const, base_url: 'http://127.0.0.1:9002', api_key: 'k3' },
  s: { kind: 'search' as const, base_url: 'http://127.0.0.1:9003' },
};
const refusal = (models: Record<string, unknown>, chans: Record<string, unknown> = channels) => {
  try {
    buildConfig({ channels: chans as never, models: models as never });
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};

test('a model lists channels with upstream names, priorities and weights; the single form is one channel', () => {
  const { config } = buildConfig({
    channels,
    models: {
      listed: {
        type: 'chat',
        upstream_model: 'm',
        channels: [
          { channel: 'a', weight: 3 },
          { channel: 'b', upstream_model: 'm-b', priority: 1 },
        ],
      },
      single: { type: 'chat', channel: 'b', upstream_model: 'x' },
    },
  });
  assert.deepEqual(modelRoutes(config.models.listed!), [
    { channel: 'a', upstreamModel: 'm', priority: 0, weight: 3 },
    { channel: 'b', upstreamModel: 'm-b', priority: 1, weight: 1 },
  ]);
  assert.deepEqual(modelRoutes(config.models.single!), [{ channel: 'b', upstreamModel: 'x', priority: 0, weight: 1 }]);
});

test('an unknown channel in the list is refused naming its place', () => {
  assert.match(
    refusal({ m: { type: 'chat', channels: [{ channel: 'a' }, { channel: 'nowhere' }] } }),
    /models\.m\.channels\.1\.channel: no channel named "nowhere"/,
  );
});

test('a channel of the wrong kind for the model’s type is refused', () => {
  assert.match(
    refusal({ m: { type: 'chat', channels: [{ channel: 's' }] } }),
    /models\.m\.channels\.0\.channel: channel "s" is of kind search, which cannot serve a chat model/,
  );
  assert.match(refusal({ m: { type: 'search', channel: 'a' } }), /models\.m\.channel: channel "a" is of kind openai, which cannot serve a search model/);
});

test('an empty list, both forms at once, or neither are refused', () => {
  assert.match(refusal({ m: { type: 'chat', channels: [] } }), /models\.m\.channels: the list of channels is empty/);
  assert.match(refusal({ m: { type: 'chat', channel: 'a', channels: [{ channel: 'b' }] } }), /models\.m\.channels: give channel or channels, not both/);
  assert.match(refusal({ m: { type: 'chat' } }), /models\.m\.channel: a model needs a channel/);
});

test('a weight must be a positive integer and a channel gives api_key or api_keys, not both', () => {
  assert.match(refusal({ m: { type: 'chat', channels: [{ channel: 'a', weight: 0 }] } }), /models\.m\.channels\.0\.weight/);
  assert.match(refusal({}, { a: { ...channels.a, api_key: 'k0' } }), /channels\.a\.api_keys: give api_key or api_keys, not both/);
});

test('a chat model may list channels of different kinds, an OpenAI one with a Bedrock fallback', () => {
  const { config } = buildConfig({
    channels: { ...channels, aws: { kind: 'bedrock', base_url: 'http://127.0.0.1:9004', region: 'us-east-1' } },
    models: { mixed: { type: 'chat', channels: [{ channel: 'a' }, { channel: 'aws', upstream_model: 'anthropic.claude-v2', priority: 1 }] } },
  });
  assert.deepEqual(
    modelRoutes(config.models.mixed!).map((route) => route.channel),
    ['a', 'aws'],
  );
});

test('a bedrock channel without its region is refused naming the field', () => {
  const message = refusal({}, { aws: { kind: 'bedrock', base_url: 'http://127.0.0.1:9004' } });
  assert.match(message, /channels\.aws\.region: a bedrock channel needs its AWS region/);
});

test('vertex belongs to a gemini channel, and not beside an api_key', () => {
  const vertex = { project: 'p', region: 'us-central1', service_account_json: '{}' };
  assert.match(refusal({}, { v: { kind: 'openai', base_url: 'http://127.0.0.1:9005', vertex } }), /channels\.v\.vertex: vertex is for channels of kind gemini/);
  assert.match(
    refusal({}, { v: { kind: 'gemini', base_url: 'http://127.0.0.1:9005', api_key: 'k', vertex } }),
    /channels\.v\.vertex: give vertex or an api_key, not both/,
  );
});

test('a vertex service account is given once: by file or as JSON', () => {
  const vertex = { project: 'p', region: 'us-central1' };
  assert.match(refusal({}, { v: { kind: 'gemini', base_url: 'http://127.0.0.1:9005', vertex } }), /give service_account_file or service_account_json/);
});
