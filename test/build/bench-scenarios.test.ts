// The bench compares like with like: where direct and floor cannot make the gateway's own call,
// they make the upstream call the gateway makes, so the sandbox does the same work for all three.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildScenarios, scenariosOfRun } from '../../bench/scenarios.js';
import { pivotRequestOf as pivotRequestOfGemini } from '../../src/formats/gemini/to-pivot.js';
import { pivotRequestOfMessages } from '../../src/formats/messages/to-pivot.js';
import { chatRequestOf } from '../../src/upstreams/openai-chat/to-upstream.js';

const scenario = (name: string) => {
  const found = buildScenarios('tr-test').defaults.find((s) => s.name === name);
  assert.ok(found, `scenario ${name}`);
  return found;
};

test('the translated messages scenario baseline is the very chat stream the gateway asks the sandbox for', () => {
  const translated = scenario('messages-translated-stream-c50');
  const gatewaySends = chatRequestOf(pivotRequestOfMessages(JSON.parse(translated.gateway.body), { upstreamModel: 'sandbox-chat' }));
  assert.equal(translated.upstream.path, '/v1/chat/completions');
  assert.deepEqual(JSON.parse(translated.upstream.body), { ...gatewaySends, stream: true, stream_options: { include_usage: true } });
  assert.equal(translated.upstream.endMarker, 'data: [DONE]');
  assert.equal(translated.gateway.endMarker, 'message_stop');
});

test('the translated Gemini scenario baseline is the very chat stream the gateway asks the sandbox for', () => {
  const translated = scenario('gemini-translated-stream-c50');
  const gatewaySends = chatRequestOf(pivotRequestOfGemini(JSON.parse(translated.gateway.body), { upstreamModel: 'sandbox-chat', stream: true }));
  assert.equal(translated.upstream.path, '/v1/chat/completions');
  assert.deepEqual(JSON.parse(translated.upstream.body), gatewaySends);
  assert.equal(translated.gateway.path, '/v1beta/models/sandbox-chat:streamGenerateContent?alt=sse');
});

test('direct and floor of a chat scenario send the gateway its own body', () => {
  const plain = scenario('chat-plain-c50');
  assert.equal(plain.upstream.body, plain.gateway.body);
  assert.equal(plain.upstream.path, plain.gateway.path);
});

test('a run of some scenarios measures those and warms the targets with every scenario of its kind', () => {
  const names = (scenarios: { name: string }[]) => scenarios.map((s) => s.name);
  const { defaults, sweep } = buildScenarios('tr-test');
  const some = scenariosOfRun('tr-test', { sweep: false, only: ['chat-plain-c50', 'chat-plain-c200'] });
  assert.deepEqual(names(some.chosen), ['chat-plain-c50', 'chat-plain-c200']);
  assert.deepEqual(names(some.warmUp), names(defaults));
  const swept = scenariosOfRun('tr-test', { sweep: true, only: [] });
  assert.deepEqual(names(swept.chosen), names(sweep));
  assert.deepEqual(names(swept.warmUp), names(sweep));
});

test('a run naming no scenario of its kind is refused', () => {
  assert.throws(() => scenariosOfRun('tr-test', { sweep: false, only: ['no-such-scenario'] }), /no scenario named no-such-scenario/);
});
