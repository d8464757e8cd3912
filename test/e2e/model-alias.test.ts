// A public model id mapped to another upstream id: callers only ever see the public one, streams included.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postForEvents } from '../helpers/sse.js';

describe('public model ids', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    const price = { input_token: 2_000_000, output_token: 8_000_000 };
    gw = await startTestGateway({
      models: {
        'pub-chat': { type: 'chat', channel: 'sandbox-openai', upstream_model: 'sandbox-chat', price },
        'pub-claude': { type: 'chat', channel: 'sandbox-anthropic', upstream_model: 'sandbox-claude', price },
      },
    });
    ({ key } = await gw.account());
  });
  after(() => gw.close());

  test('chat chunks name the public model, and the upstream got its own id', async () => {
    const { events } = await postForEvents(
      `${gw.url}/v1/chat/completions`,
      { model: 'pub-chat', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { authorization: `Bearer ${key}` },
    );
    const chunks = events.filter((e) => typeof e.data === 'object');
    assert.ok(chunks.length > 2 && chunks.every((e) => e.data.model === 'pub-chat'));
    const [sent] = (await gw.sandboxControl('GET', '/__sandbox/requests')).data.slice(-1);
    assert.equal(sent.body.model, 'sandbox-chat');
  });

  test('a native messages stream names the public model', async () => {
    const { events } = await postForEvents(
      `${gw.url}/v1/messages`,
      { model: 'pub-claude', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], stream: true },
      { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    );
    assert.equal(events.find((e) => e.event === 'message_start')!.data.message.model, 'pub-claude');
  });

  test('a responses stream names the public model', async () => {
    const { events } = await postForEvents(`${gw.url}/v1/responses`, { model: 'pub-chat', input: 'hi', stream: true }, { authorization: `Bearer ${key}` });
    assert.equal(events.find((e) => e.event === 'response.completed')!.data.response.model, 'pub-chat');
  });
});
