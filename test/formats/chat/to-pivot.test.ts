// A chat-completions request read into the pivot: each fixture holds a request built from OpenAI's
// chat completions reference and the whole pivot request expected of it.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import { pivotRequestOfChat } from '../../../src/formats/chat/to-pivot.js';
import type { ChatRequest } from '../../../src/upstreams/openai-chat/types.js';

const options = { upstreamModel: 'claude-sonnet-4-5' };

async function translates(name: string) {
  const { request, expected } = JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
  assert.deepEqual(pivotRequestOfChat(request, options), expected);
}

/** The pivot request of a one-question chat request with `fields` added. */
const pivotOf = (fields: Record<string, unknown>) =>
  pivotRequestOfChat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...fields } as ChatRequest, options);

const weatherTool = { type: 'function', function: { name: 'get_current_weather', parameters: { type: 'object', properties: {} } } };

function assertRefused(request: Record<string, unknown>, field: string) {
  assert.throws(
    () => pivotRequestOfChat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...request } as ChatRequest, options),
    (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 400);
      assert.ok(error.message.startsWith(`${field}: `), error.message);
      return true;
    },
  );
}

test('system and developer messages become the system prompt in order; defaults and bookkeeping fields pass', () => translates('request-system-and-user'));

test('an https image keeps its URL, a data URL image and a PDF file_data become inline base64 parts', () => translates('request-images'));

test('a tool call, its tool message and earlier reasoning_content become pivot tool calls, a tool message and reasoning', () =>
  translates('request-tool-round-trip'));

test('json_schema, reasoning_effort and a stop array carry over, and max_completion_tokens wins over max_tokens', () =>
  translates('request-json-schema-reasoning-stop'));

test('a stop string becomes a one-element stop list', () => {
  assert.deepEqual(pivotOf({ stop: 'END' }).stop, ['END']);
});

test('response_format json_object becomes the json_object response format, and text none', () => {
  assert.deepEqual(
    [pivotOf({ response_format: { type: 'json_object' } }).responseFormat, pivotOf({ response_format: { type: 'text' } }).responseFormat],
    [{ type: 'json_object' }, undefined],
  );
});

test('tool_choice required, none and a named function become the pivot choices, parallel_tool_calls false kept', () => {
  const choices = ['required', 'none', { type: 'function', function: { name: 'get_current_weather' } }].map((choice) =>
    pivotOf({ tools: [weatherTool], tool_choice: choice, parallel_tool_calls: false }),
  );
  assert.deepEqual(
    choices.map((request) => [request.toolChoice, request.parallelToolCalls]),
    [
      ['required', false],
      ['none', false],
      [{ name: 'get_current_weather' }, false],
    ],
  );
});

test('a tool_choice that names no function is refused, naming tool_choice', () => {
  assertRefused({ tools: [weatherTool], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } }, 'tool_choice');
});

test('n above 1 is refused, naming n', () => assertRefused({ n: 2 }, 'n'));

test('logprobs is refused, naming logprobs', () => assertRefused({ logprobs: true, top_logprobs: 2 }, 'logprobs'));

test('a seed is refused, naming seed', () => assertRefused({ seed: 42 }, 'seed'));

test('audio output is refused, naming audio', () => assertRefused({ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }, 'audio'));

test('a custom tool is refused, naming its type', () => {
  assertRefused({ tools: [weatherTool, { type: 'custom', custom: { name: 'code_exec' } }] }, 'tools[1].type');
});

test('a tool message whose tool_call_id answers no earlier call is refused, naming it', () => {
  assertRefused(
    {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_2', content: 'done' },
      ],
    },
    'messages[2].tool_call_id',
  );
});

test('a file part given by file_id is refused, naming the part', () => {
  assertRefused({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc123' } }] }] }, 'messages[0].content[0].file');
});

test('an input_audio part is refused, naming its type', () => {
  assertRefused(
    { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } }] }] },
    'messages[0].content[0].type',
  );
});
