// Round trip: a pivot request Gemini can express, written by geminiRequestOf and read back by the
// Gemini inbound format (formats/gemini/to-pivot.ts), is the request it was.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pivotRequestOf } from '../../../src/formats/gemini/to-pivot.js';
import type { PivotMessage, PivotPart, PivotRequest, PivotTool, PivotToolCall } from '../../../src/pivot/types.js';
import { geminiRequestOf } from '../../../src/upstreams/gemini/to-upstream.js';

const text = fc.string({ minLength: 1, maxLength: 10 });
const json = fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.boolean()), {
  maxKeys: 3,
  noNullPrototype: true,
});
const toolName = fc.constantFrom('get_weather', 'search', 'f');
const base64 = fc.base64String({ minLength: 4, maxLength: 12 });

// What Gemini carries both ways: text, images inline or by a URL with a known extension, PDFs inline (without a name)
const userPart: fc.Arbitrary<PivotPart> = fc.oneof(
  text.map((value) => ({ type: 'text' as const, text: value })),
  base64.map((data) => ({ type: 'image' as const, source: { kind: 'base64' as const, mediaType: 'image/png', data } })),
  fc
    .constantFrom('a.png', 'b.jpeg', 'c.webp')
    .map((file) => ({ type: 'image' as const, source: { kind: 'url' as const, url: `https://example.com/${file}` } })),
  base64.map((data) => ({ type: 'file' as const, mediaType: 'application/pdf', data })),
);

// One exchange: the user's turn, the model's (signed thoughts, text, calls; never empty, as two user
// turns in a row are one to Gemini), the calls' results. Results are JSON objects: functionResponse
// carries an object, and to-pivot reads it back as its JSON.
const exchange = fc
  .record({
    user: fc.array(userPart, { minLength: 1, maxLength: 3 }),
    thoughts: fc.array(fc.record({ text, signature: text }, { noNullPrototype: true }), { maxLength: 2 }),
    reply: fc.option(text, { nil: undefined }),
    calls: fc.array(fc.record({ name: toolName, args: json, result: json }, { noNullPrototype: true }), { maxLength: 2 }),
  })
  .filter(({ thoughts, reply, calls }) => thoughts.length > 0 || reply !== undefined || calls.length > 0);

const settings = fc.record(
  {
    maxTokens: fc.integer({ min: 1, max: 8192 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    topP: fc.double({ min: 0, max: 1, noNaN: true }),
    topK: fc.integer({ min: 1, max: 64 }),
    stop: fc.array(text, { minLength: 1, maxLength: 3 }),
    // to-pivot names every schema `response`, the name Gemini never sends
    responseFormat: fc.oneof(
      fc.constant({ type: 'json_object' as const }),
      json.map((schema) => ({ type: 'json_schema' as const, name: 'response', schema })),
    ),
    // an effort above minimal is sent as its budget and comes back as that budget
    reasoning: fc.oneof(
      fc.constant({ effort: 'minimal' as const }),
      fc.integer({ min: 1, max: 32_768 }).map((budgetTokens) => ({ budgetTokens })),
    ),
  },
  { requiredKeys: [], noNullPrototype: true },
);

const tools: fc.Arbitrary<PivotTool[]> = fc.uniqueArray(
  fc.record(
    {
      name: toolName,
      description: text,
      parameters: json.map((properties) => ({ type: 'object', properties })),
    },
    { requiredKeys: ['name', 'parameters'], noNullPrototype: true },
  ),
  { maxLength: 3, selector: (tool) => tool.name },
);

type Exchange = typeof exchange extends fc.Arbitrary<infer T> ? T : never;

/** The conversation in pivot terms, call ids numbered across it. */
function messagesOf(exchanges: Exchange[]): PivotMessage[] {
  const messages: PivotMessage[] = [];
  let n = 0;
  for (const { user, thoughts, reply, calls } of exchanges) {
    messages.push({ role: 'user', content: user });
    const toolCalls: PivotToolCall[] = calls.map(({ name, args }) => ({ id: `c${n++}`, name, arguments: JSON.stringify(args) }));
    messages.push({
      role: 'assistant',
      content: reply === undefined ? [] : [{ type: 'text', text: reply }],
      ...(thoughts.length > 0 && { reasoning: thoughts }),
      ...(toolCalls.length > 0 && { toolCalls }),
    });
    toolCalls.forEach((call, i) => {
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: [{ type: 'text', text: JSON.stringify(calls[i]!.result) }] });
    });
  }
  return messages;
}

const request = fc
  .record({
    system: fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 }),
    exchanges: fc.array(exchange, { minLength: 1, maxLength: 3 }),
    tools,
    choice: fc.constantFrom('none', 'required', 'named', undefined),
    stream: fc.boolean(),
    settings,
  })
  .map(({ system, exchanges, tools, choice, stream, settings }): PivotRequest => {
    const toolChoice = tools.length === 0 || choice === undefined ? undefined : choice === 'named' ? { name: tools[0]!.name } : choice;
    return {
      model: 'gemini-2.5-flash',
      system,
      messages: messagesOf(exchanges),
      stream,
      ...settings,
      ...(tools.length > 0 && { tools }),
      ...(toolChoice !== undefined && { toolChoice }),
    };
  });

test('a request Gemini can express keeps its system, messages, tools and settings written to Gemini and read back', () => {
  fc.assert(
    fc.property(request, (pivot) => {
      const body = JSON.parse(JSON.stringify(geminiRequestOf(pivot)));
      assert.deepEqual(pivotRequestOf(body, { upstreamModel: pivot.model, stream: pivot.stream }), pivot);
    }),
    { numRuns: 300 },
  );
});
