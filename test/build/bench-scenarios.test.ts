// The bench compares like with like: where direct and floor cannot make the gateway's own call,
// they make the upstream call the gateway makes, so the sandbox does the same work for all three.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildScenarios } from '../../bench/scenarios.js';
import { messagesToChatRequest } from '../../src/upstreams/openai-chat/from-messages.js';

const scenario = (name: string) => {
  const found = buildScenarios('tr-test').defaults.find((s) => s.name === name);
  assert.ok(found, `scenario ${name}`);
  return found;
};

test('the translated messages scenario baseline is the very chat stream the gateway asks the sandbox for', () => {
  const translated = scenario('messages-translated-stream-c50');
  const gatewaySends = messagesToChatRequest(JSON.parse(translated.gateway.body), { upstreamModel: 'sandbox-chat' });
  assert.equal(translated.upstream.path, '/v1/chat/completions');
  assert.deepEqual(JSON.parse(translated.upstream.body), { ...gatewaySends, stream: true, stream_options: { include_usage: true } });
  assert.equal(translated.upstream.endMarker, 'data: [DONE]');
  assert.equal(translated.gateway.endMarker, 'message_stop');
});

test('direct and floor of a chat scenario send the gateway its own body', () => {
  const plain = scenario('chat-plain-c50');
  assert.equal(plain.upstream.body, plain.gateway.body);
  assert.equal(plain.upstream.path, plain.gateway.path);
});
