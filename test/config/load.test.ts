// Configuration: validated at start, with messages that name the field at fault.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.js';

const dir = () => mkdtempSync(path.join(tmpdir(), 'tollroute-config-'));
const writeConfig = (text: string) => {
  const folder = dir();
  const file = path.join(folder, 'tollroute.yaml');
  writeFileSync(file, text);
  return { folder, file };
};

const minimal = `
channels:
  up: { kind: openai, base_url: "http://127.0.0.1:9999", api_key: "\${UP_KEY}" }
models:
  m1: { type: chat, channel: up, price: { input_token: 1000000, output_token: 2000000 } }
`;

test('with no config file the built-in sandbox catalogue is served', () => {
  const { config, source } = loadConfig({ env: {}, cwd: dir() });
  assert.equal(source, 'built-in sandbox catalogue');
  assert.equal(config.sandbox.enabled, true);
  assert.deepEqual(config.models['sandbox-chat']?.price, { input_token: 2_000_000, output_token: 8_000_000 });
  assert.equal(config.channels['sandbox-openai']?.base_url, 'http://127.0.0.1:8081');
  assert.equal(config.store, `sqlite:${path.join('data', 'tollroute.db')}`);
});

test('environment variables are substituted and override listen settings', () => {
  const { file } = writeConfig(minimal);
  const { config } = loadConfig({ file, env: { UP_KEY: 'sk-up', PORT: '9090', TOLLROUTE_DATA_DIR: '/tmp/x' } });
  assert.equal(config.channels.up?.api_key, 'sk-up');
  assert.equal(config.port, 9090);
  assert.equal(config.store, 'sqlite:/tmp/x/tollroute.db');
  assert.deepEqual(config.channels.up?.timeouts, { connect_ms: 10_000, headers_ms: 60_000, body_ms: 300_000 });
});

test('a missing environment variable stops start-up naming the field', () => {
  const { file } = writeConfig(minimal);
  assert.throws(
    () => loadConfig({ file, env: {} }),
    (error: Error) => error instanceof ConfigError && error.message === 'channels.up.api_key: environment variable UP_KEY is not set',
  );
});

test('a bad value stops start-up naming the field', () => {
  const { file } = writeConfig(minimal.replace('input_token: 1000000', 'input_token: "cheap"'));
  assert.throws(
    () => loadConfig({ file, env: { UP_KEY: 'k' } }),
    (error: Error) => error instanceof ConfigError && /models\.m1\.price\.input_token: Expected number, received string/.test(error.message),
  );
});

test('a model on an unknown channel stops start-up naming the field', () => {
  const { file } = writeConfig(minimal.replace('channel: up', 'channel: nowhere'));
  assert.throws(() => loadConfig({ file, env: { UP_KEY: 'k' } }), /models\.m1\.channel: no channel named "nowhere"/);
});

test('an unknown option is refused rather than silently ignored', () => {
  const { file } = writeConfig(`${minimal}\nlimitz: {}\n`);
  assert.throws(() => loadConfig({ file, env: { UP_KEY: 'k' } }), /Unrecognized key\(s\) in object: 'limitz'/);
});

test('the retry delays come from TOLLROUTE_WEBHOOK_RETRY_DELAYS_MS', () => {
  const { config } = loadConfig({ env: { TOLLROUTE_WEBHOOK_RETRY_DELAYS_MS: '10,20,30' }, cwd: dir() });
  assert.deepEqual(config.webhooks.retry_delays_ms, [10, 20, 30]);
});

test('tollroute.example.yaml documents a valid configuration', () => {
  const example = new URL('../../tollroute.example.yaml', import.meta.url).pathname;
  const referenced = readFileSync(example, 'utf8').matchAll(/\$\{([A-Z_]+)\}/g);
  const env = Object.fromEntries([...referenced].map(([, name]) => [name, `value-of-${name}-0123456789`]));
  const { config } = loadConfig({ file: example, env });
  assert.deepEqual(Object.keys(config.channels).sort(), [
    'anthropic',
    'ark',
    'ast',
    'azure',
    'bedrock',
    'deepseek',
    'erase',
    'fireworks',
    'gemini',
    'groq',
    'minutes',
    'mistral',
    'ollama',
    'openai',
    'openai-backup',
    'openrouter',
    'search',
    'speech',
    'together',
    'vertex',
    'vllm',
    'xai',
  ]);
  assert.deepEqual([...new Set(Object.values(config.models).map((m) => m.type))].sort(), [
    'ast',
    'chat',
    'embedding',
    'erase',
    'image',
    'minutes',
    'moderation',
    'rerank',
    'search',
    'transcription',
    'tts',
    'video',
  ]);
});
