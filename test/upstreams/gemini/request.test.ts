// A pivot request written as a Gemini generateContent body: each fixture holds the pivot request and
// the whole body sent upstream (shaped on the examples of Gemini's generateContent reference).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import type { PivotMessage, PivotRequest } from '../../../src/pivot/types.js';
import { geminiRequestOf } from '../../../src/upstreams/gemini/to-upstream.js';

async function writes(name: string) {
  const { pivot, expected } = JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
  assert.deepEqual(geminiRequestOf(pivot), expected);
}

const question: PivotMessage = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
const requestWith = (fields: Partial<PivotRequest>): PivotRequest => ({
  model: 'gemini-2.5-flash',
  system: [],
  messages: [question],
  stream: false,
  ...fields,
});
const tools = [{ name: 'lookup' }, { name: 'log' }];

function assertRefused(request: PivotRequest, field: string) {
  assert.throws(
    () => geminiRequestOf(request),
    (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 400);
      assert.ok(error.message.startsWith(`${field}: `), error.message);
      return true;
    },
  );
}

test('system becomes systemInstruction; calls and results keep their ids and names, and the results merge with the user turn after them', () =>
  writes('request-tool-round-trip'));

test('images go inline or by URL with the type read from the extension, and a PDF inline', () => writes('request-media'));

test('signed reasoning goes back as thought parts, a bare signature on the first call, an error result as {error}, a named tool choice as ANY of it', () =>
  writes('request-thinking-signatures'));

test('a request with only a user turn is contents alone: no empty systemInstruction, tools or generationConfig', () => {
  assert.deepEqual(geminiRequestOf(requestWith({})), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
});

test('an image URL without an extension is refused with a 400 naming the part', () => {
  const messages: PivotMessage[] = [
    { role: 'user', content: [question.content[0]!, { type: 'image', source: { kind: 'url', url: 'https://example.com/download?id=3' } }] },
  ];
  assertRefused(requestWith({ messages }), 'messages[0].content[1]');
});

test('an image URL with a type Gemini is not given by extension (.svg) is refused too', () => {
  const messages: PivotMessage[] = [
    question,
    { role: 'assistant', content: [] },
    { role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'https://example.com/a.svg' } }] },
  ];
  assertRefused(requestWith({ messages }), 'messages[2].content[0]');
});

test('JSON mode asks for application/json without a schema', () => {
  assert.deepEqual(geminiRequestOf(requestWith({ responseFormat: { type: 'json_object' } })).generationConfig, { responseMimeType: 'application/json' });
});

test('a JSON schema is sent as responseJsonSchema, as it is', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
  assert.deepEqual(geminiRequestOf(requestWith({ responseFormat: { type: 'json_schema', name: 'reply', schema, strict: true } })).generationConfig, {
    responseMimeType: 'application/json',
    responseJsonSchema: schema,
  });
});

test('each reasoning effort becomes a thinking budget, minimal turning thinking off', () => {
  const efforts = ['minimal', 'low', 'medium', 'high'] as const;
  assert.deepEqual(
    efforts.map((effort) => geminiRequestOf(requestWith({ reasoning: { effort } })).generationConfig?.thinkingConfig),
    [
      { thinkingBudget: 0, includeThoughts: false },
      { thinkingBudget: 2048, includeThoughts: true },
      { thinkingBudget: 8192, includeThoughts: true },
      { thinkingBudget: 24576, includeThoughts: true },
    ],
  );
});

test('a budget in tokens is sent as it is, even beside an effort', () => {
  assert.deepEqual(geminiRequestOf(requestWith({ reasoning: { effort: 'low', budgetTokens: 5000 } })).generationConfig?.thinkingConfig, {
    thinkingBudget: 5000,
    includeThoughts: true,
  });
});

test('tool choices map to functionCallingConfig: auto to none at all, none to NONE, required to ANY, a name to ANY of it', () => {
  const choices = ['auto', 'none', 'required', { name: 'log' }] as const;
  assert.deepEqual(
    choices.map((toolChoice) => geminiRequestOf(requestWith({ tools, toolChoice })).toolConfig),
    [
      undefined,
      { functionCallingConfig: { mode: 'NONE' } },
      { functionCallingConfig: { mode: 'ANY' } },
      { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['log'] } },
    ],
  );
});

test('a tool choice without tools sends no toolConfig', () => {
  assert.equal(geminiRequestOf(requestWith({ toolChoice: 'required' })).toolConfig, undefined);
});

test('a bare signature with no call goes back on the first text part', () => {
  const messages: PivotMessage[] = [question, { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }], reasoning: [{ text: '', signature: 'sig' }] }];
  assert.deepEqual(geminiRequestOf(requestWith({ messages })).contents?.[1], { role: 'model', parts: [{ text: 'Hello.', thoughtSignature: 'sig' }] });
});

test('tool arguments that are a JSON array are refused, naming tool_calls', () => {
  const messages: PivotMessage[] = [question, { role: 'assistant', content: [], toolCalls: [{ id: 'c', name: 'lookup', arguments: '[1,2]' }] }];
  assertRefused(requestWith({ tools, messages }), 'tool_calls');
});

test('tool arguments that are not JSON at all are refused, naming tool_calls', () => {
  const messages: PivotMessage[] = [question, { role: 'assistant', content: [], toolCalls: [{ id: 'c', name: 'lookup', arguments: '{"q": "unclosed' }] }];
  assertRefused(requestWith({ tools, messages }), 'tool_calls');
});

test('an assistant turn with nothing to send is left out and the user turns around it merge', () => {
  const messages: PivotMessage[] = [
    question,
    { role: 'assistant', content: [{ type: 'text', text: '' }] },
    { role: 'user', content: [{ type: 'text', text: 'again' }] },
  ];
  assert.deepEqual(geminiRequestOf(requestWith({ messages })).contents, [{ role: 'user', parts: [{ text: 'hi' }, { text: 'again' }] }]);
});

test('a tool result holding an image is refused, naming the part, rather than sent without it', () => {
  const messages: PivotMessage[] = [
    question,
    { role: 'assistant', content: [], toolCalls: [{ id: 'c', name: 'lookup', arguments: '{}' }] },
    {
      role: 'tool',
      toolCallId: 'c',
      name: 'lookup',
      content: [
        { type: 'text', text: 'the chart:' },
        { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    },
  ];
  assertRefused(requestWith({ tools, messages }), 'messages[2].content[1]');
});
