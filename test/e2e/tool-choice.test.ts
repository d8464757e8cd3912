// tool_choice reaches the upstream and is honoured there (the sandbox as a real model would):
// `required`/`any` makes a call, a named function makes that call, `none` makes none. Through the
// gateway with the official clients, on chat completions, messages (translated and native) and responses.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const chatTools = ['get_weather', 'get_time'].map((name) => ({
  type: 'function' as const,
  function: { name, parameters: { type: 'object', properties: { query: { type: 'string' } } } },
}));
const messagesTools = ['get_weather', 'get_time'].map((name) => ({
  name,
  input_schema: { type: 'object' as const, properties: { query: { type: 'string' } } },
}));
const responsesTools = ['get_weather', 'get_time'].map((name) => ({
  type: 'function' as const,
  name,
  strict: false,
  parameters: { type: 'object', properties: { query: { type: 'string' } } },
}));

describe('tool_choice', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let claude: Anthropic;
  before(async () => {
    gw = await startTestGateway();
    const { key } = await gw.account({ creditMicros: 10_000_000 });
    openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    claude = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  });
  after(() => gw.close());

  const chatCall = async (tool_choice: OpenAI.Chat.ChatCompletionToolChoiceOption, content = 'what is it like') => {
    const completion = await openai.chat.completions.create({ model: 'sandbox-chat', tools: chatTools, tool_choice, messages: [{ role: 'user', content }] });
    const call = completion.choices[0]!.message.tool_calls?.[0];
    return call?.type === 'function' ? call.function.name : undefined;
  };

  test('chat: required makes a call, a named function makes that call, none makes none', async () => {
    assert.equal(await chatCall('required'), 'get_weather');
    assert.equal(await chatCall({ type: 'function', function: { name: 'get_time' } }), 'get_time');
    assert.equal(
      await chatCall({ type: 'function', function: { name: 'get_time' } }, 'now [[tool:get_weather]]'),
      'get_time',
      'the named choice wins over the prompt',
    );
    assert.equal(await chatCall('none', 'now [[tool:get_weather]]'), undefined);
    assert.equal(await chatCall('auto'), undefined);
  });

  for (const model of ['sandbox-chat', 'sandbox-claude']) {
    test(`messages on ${model}: any makes a call, a named tool makes that call, none makes none`, async () => {
      const toolOf = async (tool_choice: Anthropic.MessageCreateParams['tool_choice']) => {
        const message = await claude.messages.create({
          model,
          max_tokens: 100,
          tools: messagesTools,
          tool_choice,
          messages: [{ role: 'user', content: 'now [[tool:get_weather]]' }],
        });
        const block = message.content.find((b) => b.type === 'tool_use');
        return block?.type === 'tool_use' ? block.name : undefined;
      };
      assert.equal(await toolOf({ type: 'any' }), 'get_weather');
      assert.equal(await toolOf({ type: 'tool', name: 'get_time' }), 'get_time');
      assert.equal(await toolOf({ type: 'none' }), undefined);
    });
  }

  test('responses: required makes a call, a named function makes that call', async () => {
    const toolOf = async (tool_choice: OpenAI.Responses.ResponseCreateParams['tool_choice']) => {
      const response = await openai.responses.create({ model: 'sandbox-chat', tools: responsesTools, tool_choice, input: 'what is it like' });
      const call = response.output.find((item) => item.type === 'function_call');
      return call?.type === 'function_call' ? call.name : undefined;
    };
    assert.equal(await toolOf('required'), 'get_weather');
    assert.equal(await toolOf({ type: 'function', name: 'get_time' }), 'get_time');
    assert.equal(await toolOf('auto'), undefined);
  });
});
