// Where a transcription goes on each kind of OpenAI-style channel.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChannelConfig } from '../../../src/config/schema.js';
import { transcriptionsPath } from '../../../src/upstreams/openai-transcriptions/client.js';
import type { Upstream } from '../../../src/upstreams/pool.js';

const upstream = (channel: Partial<ChannelConfig>) => ({ name: 'c', channel, basePath: '' }) as unknown as Upstream;

test('OpenAI takes /v1/audio/transcriptions', () => {
  assert.equal(transcriptionsPath(upstream({ kind: 'openai' }), 'whisper-1'), '/v1/audio/transcriptions');
});

test('Azure with an api_version takes the deployment path, the deployment named by the upstream model', () => {
  assert.equal(
    transcriptionsPath(upstream({ kind: 'azure', api_version: '2024-10-21' }), 'my whisper'),
    '/openai/deployments/my%20whisper/audio/transcriptions?api-version=2024-10-21',
  );
});

test('Azure without an api_version takes its v1 path', () => {
  assert.equal(transcriptionsPath(upstream({ kind: 'azure' }), 'whisper'), '/openai/v1/audio/transcriptions');
});
