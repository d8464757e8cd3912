// The bench compares like with like: where direct and floor cannot make the gateway's own call,
// they make the upstream call the gateway makes, so the sandbox does the same work for all three.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { signedBedrockBaseline } from '../../bench/bedrock-baseline.js';
import { BEDROCK_CHAT_BODY, buildScenarios, scenariosOfRun } from '../../bench/scenarios.js';
import { pivotRequestOfChat } from '../../src/formats/chat/to-pivot.js';
import { pivotRequestOf as pivotRequestOfGemini } from '../../src/formats/gemini/to-pivot.js';
import { pivotRequestOfMessages } from '../../src/formats/messages/to-pivot.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { converseRequestOf } from '../../src/upstreams/bedrock/to-upstream.js';
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

test('the chat stream on Bedrock is measured against the signed Converse stream the gateway sends, and left out without one', async () => {
  const baseline = await signedBedrockBaseline('http://127.0.0.1:18081', BEDROCK_CHAT_BODY);
  const scenarios = buildScenarios('tr-test', baseline).defaults;
  const bedrock = scenarios.find((s) => s.name === 'chat-bedrock-stream-c50');
  assert.ok(bedrock);
  assert.equal(bedrock.upstream.path, '/model/sandbox-bedrock/converse-stream');
  assert.equal(bedrock.upstream.headers.Host, '127.0.0.1:18081');
  assert.match(bedrock.upstream.headers.authorization ?? '', /^AWS4-HMAC-SHA256 Credential=SANDBOXACCESSKEYID\//);
  const gatewaySends = converseRequestOf({ ...pivotRequestOfChat(JSON.parse(BEDROCK_CHAT_BODY), { upstreamModel: 'sandbox-bedrock' }), maxTokens: 4096 });
  assert.deepEqual(JSON.parse(bedrock.upstream.body), gatewaySends);
  assert.equal(
    buildScenarios('tr-test').defaults.some((s) => s.name === 'chat-bedrock-stream-c50'),
    false,
  );
});

test('the signed Converse baseline is answered by the sandbox, again and again, as the load sends it', async () => {
  const sandbox = await startSandbox({ port: 0 });
  try {
    const baseline = await signedBedrockBaseline(sandbox.url, BEDROCK_CHAT_BODY);
    for (let i = 0; i < 2; i++) {
      const answer = await request(`${sandbox.url}${baseline.path}`, { method: 'POST', headers: baseline.headers, body: baseline.body });
      const bytes = Buffer.from(await answer.body.arrayBuffer());
      assert.equal(answer.statusCode, 200, bytes.toString('utf8').slice(0, 300));
      assert.ok(bytes.includes(baseline.endMarker), 'the stream reaches its metadata event');
    }
  } finally {
    await sandbox.close();
  }
});
