// Every inbound format on every upstream kind, with the official clients as users call them: the
// same conversation gets the sandbox's same answer in each cell, plain and streamed, a tool call
// comes back as a tool call, and each call is billed exactly the usage the caller was shown.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** One chat model per upstream kind in the built-in catalogue, all priced 2 and 8 micros a token. */
const MODELS = ['sandbox-chat', 'sandbox-claude', 'sandbox-azure', 'sandbox-gemini', 'sandbox-vertex', 'sandbox-bedrock'];
const bill = (input: number, output: number) => input * 2 + output * 8;
const ANSWER = 'Sandbox says: what is a toll road';
const weather = { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { query: { type: 'string' } } } };

interface Answer {
  text: string;
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
  /** What the caller's usage says the call cost. */
  micros: number;
}

interface InboundClient {
  name: string;
  ask(key: string, model: string, args: { text: string; stream: boolean; tools?: boolean }): Promise<Answer>;
}

let gw: TestGateway;

const chatClient: InboundClient = {
  name: 'chat completions (openai)',
  async ask(key, model, { text, stream, tools }) {
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const params = {
      model,
      messages: [
        { role: 'system' as const, content: 'You are terse.' },
        { role: 'user' as const, content: text },
      ],
      ...(tools && { tools: [{ type: 'function' as const, function: weather }] }),
    };
    const completion = stream
      ? await client.chat.completions.stream({ ...params, stream_options: { include_usage: true } }).finalChatCompletion()
      : await client.chat.completions.create(params);
    const message = completion.choices[0]!.message;
    assert.ok(completion.usage, 'the answer carries usage');
    return {
      text: message.content ?? '',
      toolCalls: (message.tool_calls ?? []).map((call) => {
        assert.equal(call.type, 'function');
        return { name: call.function.name, arguments: JSON.parse(call.function.arguments) };
      }),
      micros: bill(completion.usage.prompt_tokens, completion.usage.completion_tokens),
    };
  },
};

const messagesClient: InboundClient = {
  name: 'messages (@anthropic-ai/sdk)',
  async ask(key, model, { text, stream, tools }) {
    const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
    const params = {
      model,
      max_tokens: 200,
      system: 'You are terse.',
      messages: [{ role: 'user' as const, content: text }],
      ...(tools && { tools: [{ name: weather.name, description: weather.description, input_schema: weather.parameters as { type: 'object' } }] }),
    };
    const message = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    const usage = message.usage;
    return {
      text: message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
      toolCalls: message.content.flatMap((block) =>
        block.type === 'tool_use' ? [{ name: block.name, arguments: block.input as Record<string, unknown> }] : [],
      ),
      micros: bill(usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0), usage.output_tokens),
    };
  },
};

const responsesClient: InboundClient = {
  name: 'responses (openai)',
  async ask(key, model, { text, stream, tools }) {
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const params = {
      model,
      instructions: 'You are terse.',
      input: text,
      ...(tools && {
        tools: [{ type: 'function' as const, name: weather.name, description: weather.description, parameters: weather.parameters, strict: false }],
      }),
    };
    const response = stream ? await client.responses.stream(params).finalResponse() : await client.responses.create(params);
    assert.ok(response.usage, 'the answer carries usage');
    return {
      text: response.output_text,
      toolCalls: response.output.flatMap((item) => (item.type === 'function_call' ? [{ name: item.name, arguments: JSON.parse(item.arguments) }] : [])),
      micros: bill(response.usage.input_tokens, response.usage.output_tokens),
    };
  },
};

/** Google's SDK as its users call it; `apiVersion` v1 reaches the same calls under /v1/models. */
const geminiClient = (apiVersion: 'v1beta' | 'v1'): InboundClient => ({
  name: `Gemini API ${apiVersion} (@google/genai)`,
  async ask(key, model, { text, stream, tools }) {
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url, apiVersion } });
    const params = {
      model,
      contents: text,
      config: {
        systemInstruction: 'You are terse.',
        ...(tools && {
          tools: [{ functionDeclarations: [{ name: weather.name, description: weather.description, parametersJsonSchema: weather.parameters }] }],
        }),
      },
    };
    let answer = '';
    const calls: { name: string; arguments: Record<string, unknown> }[] = [];
    let usage: { promptTokenCount?: number; candidatesTokenCount?: number; thoughtsTokenCount?: number } | undefined;
    const chunks = stream ? await ai.models.generateContentStream(params) : [await ai.models.generateContent(params)];
    for await (const chunk of chunks) {
      answer += chunk.text ?? '';
      for (const call of chunk.functionCalls ?? []) calls.push({ name: call.name ?? '', arguments: call.args ?? {} });
      if (chunk.usageMetadata) usage = chunk.usageMetadata;
    }
    assert.ok(usage, 'the answer carries usage');
    return { text: answer, toolCalls: calls, micros: bill(usage.promptTokenCount ?? 0, (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0)) };
  },
});

const CLIENTS = [chatClient, messagesClient, responsesClient, geminiClient('v1beta'), geminiClient('v1')];

describe('every inbound format on every upstream kind', () => {
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  for (const client of CLIENTS) {
    for (const model of MODELS) {
      for (const stream of [false, true]) {
        const how = stream ? 'streamed' : 'plain';
        test(`${client.name} on ${model}, ${how}: the sandbox's answer, billed exactly its usage`, async () => {
          const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
          const answer = await client.ask(key, model, { text: 'what is a toll road', stream });
          assert.equal(answer.text, ANSWER);
          assert.deepEqual(answer.toolCalls, []);
          assert.ok(answer.micros > 0);
          assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - answer.micros);
        });

        test(`${client.name} on ${model}, ${how}: a tool call comes back as a tool call, billed exactly its usage`, async () => {
          const { accountId, key } = await gw.account({ creditMicros: 1_000_000 });
          const answer = await client.ask(key, model, { text: 'weather in Oslo [[tool:get_weather]]', stream, tools: true });
          assert.deepEqual(answer.toolCalls, [{ name: 'get_weather', arguments: { query: 'weather in Oslo' } }]);
          assert.equal((await gw.settled(accountId)).balance_micros, 1_000_000 - answer.micros);
        });
      }
    }
  }
});
