// A model whose channels are of different kinds: a call that fails over is sent to each channel in
// that channel's own format (translated where the kind is not the caller's), and is held and billed
// once whichever channel served it.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { listLedger } from '../../src/store/ledger-rows.js';
import { listUsage } from '../../src/store/usage.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const ANSWER = 'Sandbox says: what is a toll road';

describe('failover across channel kinds', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway((url) => {
      const catalogue = sandboxCatalogue(url) as { channels: Record<string, object>; models: Record<string, any> };
      const chat = catalogue.models['sandbox-chat'];
      const routed = (channels: { channel: string; priority: number }[]) => ({ ...chat, channel: undefined, upstream_model: 'mixed', channels });
      return {
        routing: { cooldown_ms: 1, max_cooldown_ms: 1, failures_to_open: 1_000 },
        models: {
          ...catalogue.models,
          'openai-then-claude': routed([
            { channel: 'sandbox-openai', priority: 0 },
            { channel: 'sandbox-anthropic', priority: 1 },
          ]),
          'openai-then-bedrock': routed([
            { channel: 'sandbox-openai', priority: 0 },
            { channel: 'sandbox-bedrock', priority: 1 },
          ]),
          'claude-then-openai': routed([
            { channel: 'sandbox-anthropic', priority: 0 },
            { channel: 'sandbox-openai', priority: 1 },
          ]),
        },
      };
    });
  });
  after(() => gw.close());
  beforeEach(async () => {
    await gw.sandboxControl('DELETE', '/__sandbox/faults');
    await gw.sandboxControl('DELETE', '/__sandbox/requests');
  });

  /** The upstream requests the sandbox received, as `kind path`. */
  const sent = async () => ((await gw.sandboxControl('GET', '/__sandbox/requests')).data as { kind: string; path: string }[]).map((r) => `${r.kind} ${r.path}`);

  async function billOf(accountId: string) {
    await gw.settled(accountId);
    const usage = await listUsage(gw.gateway.store.db, { accountId });
    const ledger = (await listLedger(gw.gateway.store, { accountId })).filter((row) => row.kind !== 'credit');
    return { rows: usage.length, kinds: ledger.map((row) => row.kind).sort(), balance: (await gw.balance(accountId)).balance_micros };
  }

  test('a chat call whose OpenAI channel fails is sent to the Anthropic channel as a messages request, billed once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', status: 503 });
    const answer = await gw.call(key, 'POST', '/v1/chat/completions', {
      model: 'openai-then-claude',
      messages: [{ role: 'user', content: 'what is a toll road' }],
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.choices[0].message.content, ANSWER);
    assert.deepEqual(await sent(), ['chat /v1/chat/completions', 'messages /v1/messages']);
    const { prompt_tokens: input, completion_tokens: output } = answer.body.usage;
    assert.deepEqual(await billOf(accountId), { rows: 1, kinds: ['hold', 'settle'], balance: 1_000_000 - (input * 2 + output * 8) });
  });

  test('a streamed chat call fails over to the Anthropic channel before its first byte and streams the translation', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', status: 500 });
    const body = {
      model: 'openai-then-claude',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'what is a toll road' }],
    };
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200);
    const chunks = (await response.text())
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)));
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    assert.equal(text, ANSWER);
    const usage = chunks.find((chunk) => chunk.usage)?.usage;
    assert.deepEqual(await sent(), ['chat /v1/chat/completions', 'messages /v1/messages']);
    assert.deepEqual(await billOf(accountId), {
      rows: 1,
      kinds: ['hold', 'settle'],
      balance: 1_000_000 - (usage.prompt_tokens * 2 + usage.completion_tokens * 8),
    });
  });

  test('a streamed chat call whose OpenAI channel fails is sent to the Bedrock channel as a signed Converse stream, billed once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', status: 502 });
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai-then-bedrock',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'what is a toll road' }],
      }),
    });
    assert.equal(response.status, 200);
    const chunks = (await response.text())
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)));
    assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join(''), ANSWER);
    const usage = chunks.find((chunk) => chunk.usage)?.usage;
    assert.deepEqual(await sent(), ['chat /v1/chat/completions', 'bedrock /model/mixed/converse-stream']);
    assert.deepEqual(await billOf(accountId), {
      rows: 1,
      kinds: ['hold', 'settle'],
      balance: 1_000_000 - (usage.prompt_tokens * 2 + usage.completion_tokens * 8),
    });
  });

  test('a messages call whose Anthropic channel is overloaded is translated for the OpenAI channel, billed once', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'messages', status: 529 });
    const answer = await gw.call(
      key,
      'POST',
      '/v1/messages',
      { model: 'claude-then-openai', max_tokens: 50, messages: [{ role: 'user', content: 'what is a toll road' }] },
      { 'anthropic-version': '2023-06-01' },
    );
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.content, [{ type: 'text', text: ANSWER }]);
    assert.deepEqual(await sent(), ['messages /v1/messages', 'chat /v1/chat/completions']);
    const { input_tokens: input, output_tokens: output } = answer.body.usage;
    assert.deepEqual(await billOf(accountId), { rows: 1, kinds: ['hold', 'settle'], balance: 1_000_000 - (input * 2 + output * 8) });
  });

  test('a request the second kind cannot carry fails over as a refusal, released in full', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', status: 503 });
    // JSON mode has no messages form: the OpenAI channel could serve it, the Anthropic one cannot.
    const answer = await gw.call(key, 'POST', '/v1/chat/completions', {
      model: 'openai-then-claude',
      response_format: { type: 'json_object' },
      messages: [{ role: 'user', content: 'what is a toll road' }],
    });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.match(answer.body.error, /^response_format: /);
    assert.deepEqual(await billOf(accountId), { rows: 0, kinds: ['hold', 'release'], balance: 1_000_000 });
  });
});
