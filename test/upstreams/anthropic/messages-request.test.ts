// A pivot request written as an Anthropic messages request: each fixture holds the pivot request
// and the whole body sent upstream (shaped on the example of Anthropic's messages reference).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import type { PivotMessage, PivotRequest } from '../../../src/pivot/types.js';
import { messagesRequestOf } from '../../../src/upstreams/anthropic/to-upstream.js';

async function translates(name: string) {
  const { pivot, expected } = JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
  assert.deepEqual(messagesRequestOf(pivot), expected);
}

const question: PivotMessage = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
const requestWith = (fields: Partial<PivotRequest>): PivotRequest => ({
  model: 'claude-sonnet-4-5',
  system: [],
  messages: [question],
  stream: false,
  maxTokens: 1024,
  ...fields,
});

function assertRefused(request: PivotRequest, field: string) {
  assert.throws(
    () => messagesRequestOf(request),
    (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 400);
      assert.ok(error.message.startsWith(`${field}: `), error.message);
      return true;
    },
  );
}

test('system joins with a blank line; tool calls become tool_use and their results one user turn ahead of its text', () =>
  translates('request-tool-round-trip'));

test('URL and base64 images become image blocks and a PDF a document titled with its name; top_p and top_k carry over', () =>
  translates('request-images-and-pdf'));

test('an effort becomes a thinking budget, signed reasoning goes back as thinking and unsigned is dropped; required without parallel calls is any', () =>
  translates('request-thinking-and-forced-tool'));

test('tool_choice none and a named tool map to their messages forms', () => {
  const tools = [{ name: 'log' }];
  assert.deepEqual(
    [
      messagesRequestOf(requestWith({ tools, toolChoice: 'none' })).tool_choice,
      messagesRequestOf(requestWith({ tools, toolChoice: { name: 'log' } })).tool_choice,
    ],
    [{ type: 'none' }, { type: 'tool', name: 'log' }],
  );
});

test('a tool without parameters gets an empty object schema, which messages requires', () => {
  assert.deepEqual(messagesRequestOf(requestWith({ tools: [{ name: 'now' }] })).tools, [{ name: 'now', input_schema: { type: 'object', properties: {} } }]);
});

test('a budget given in tokens is sent as it is', () => {
  assert.deepEqual(messagesRequestOf(requestWith({ maxTokens: 8000, reasoning: { budgetTokens: 5000 } })).thinking, { type: 'enabled', budget_tokens: 5000 });
});

test('an assistant turn with nothing to send is left out and the user turns around it merge', () => {
  const messages: PivotMessage[] = [
    question,
    { role: 'assistant', content: [{ type: 'text', text: '' }] },
    { role: 'user', content: [{ type: 'text', text: 'again' }] },
  ];
  assert.deepEqual(messagesRequestOf(requestWith({ messages })).messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'text', text: 'again' },
      ],
    },
  ]);
});

test('JSON mode is refused, naming response_format: messages has none', () => {
  assertRefused(requestWith({ responseFormat: { type: 'json_object' } }), 'response_format');
});

test('a thinking budget not below max_tokens is refused, naming max_tokens', () => {
  assertRefused(requestWith({ maxTokens: 1024, reasoning: { effort: 'minimal' } }), 'max_tokens');
});

test('a file other than a PDF is refused, naming the file', () => {
  assertRefused(requestWith({ messages: [{ role: 'user', content: [{ type: 'file', mediaType: 'text/csv', data: 'YSxi' }] }] }), 'file');
});

test('tool call arguments that are not a JSON object are refused, naming tool_calls', () => {
  for (const args of ['[1,2]', '{"city": "Par', 'null']) {
    const messages: PivotMessage[] = [question, { role: 'assistant', content: [], toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: args }] }];
    assertRefused(requestWith({ messages }), 'tool_calls');
  }
});
