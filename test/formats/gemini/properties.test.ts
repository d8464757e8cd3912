// Round trips: an answer streamed and read back by a simple Gemini reader is the plain answer; a
// request the Gemini API can express keeps, through the pivot, its messages, tools and settings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { generateContentResponseOf } from '../../../src/formats/gemini/from-pivot.js';
import { GeminiJsonArrayEncoder, GeminiSseEncoder } from '../../../src/formats/gemini/stream.js';
import { pivotRequestOf } from '../../../src/formats/gemini/to-pivot.js';
import type { PivotEvent, PivotMessage, PivotResponse } from '../../../src/pivot/types.js';

const ids = { model: 'public-model', responseId: 'r1' };
const name = fc.constantFrom('get_weather', 'search', 'f');
const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.boolean()), {
  maxKeys: 3,
  noNullPrototype: true,
});
const answer: fc.Arbitrary<PivotResponse> = fc.record(
  {
    text: fc.string({ maxLength: 12 }),
    reasoning: fc.array(
      fc.record(
        { text: fc.string({ minLength: 1, maxLength: 12 }), signature: fc.string({ minLength: 1, maxLength: 6 }) },
        { requiredKeys: ['text'], noNullPrototype: true },
      ),
      {
        maxLength: 2,
      },
    ),
    toolCalls: fc.uniqueArray(
      fc.record({ id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/), name, arguments: args.map((value) => JSON.stringify(value)) }, { noNullPrototype: true }),
      { maxLength: 3, selector: (call) => call.id },
    ),
    finish: fc.constantFrom('stop', 'length', 'tool_calls', 'stop_sequence', 'refusal'),
    usage: fc.record(
      { input: fc.nat(1000), output: fc.nat(1000), cacheRead: fc.nat(100), reasoning: fc.nat(100) },
      { requiredKeys: ['input', 'output'], noNullPrototype: true },
    ),
  },
  { requiredKeys: ['text', 'toolCalls', 'finish'], noNullPrototype: true },
);

function pieces(value: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((cut) => cut % (value.length + 1)))].sort((a, b) => a - b);
  return [...at, value.length].map((end, i) => value.slice(i === 0 ? 0 : at[i - 1], end)).filter((piece) => piece !== '');
}

function eventsOf(answer: PivotResponse, cuts: number[], usageFirst: boolean): PivotEvent[] {
  const events: PivotEvent[] = [];
  for (const reasoning of answer.reasoning ?? [])
    events.push({ type: 'reasoning', text: reasoning.text, ...(reasoning.signature && { signature: reasoning.signature }) });
  for (const piece of pieces(answer.text, cuts)) events.push({ type: 'text', text: piece });
  answer.toolCalls.forEach((call, index) => {
    const [first = '', ...rest] = pieces(call.arguments, cuts);
    events.push({ type: 'tool_call', index, id: call.id, name: call.name, arguments: first });
    for (const piece of rest) events.push({ type: 'tool_call', index, arguments: piece });
  });
  const ending: PivotEvent[] = [{ type: 'finish', finish: answer.finish }];
  if (answer.usage) ending[usageFirst ? 'unshift' : 'push']({ type: 'usage', usage: answer.usage });
  return [...events, ...ending, { type: 'done' }];
}

/** What a simple reader makes of the chunks: parts merged in order (adjacent texts of one kind joined), the last finish and usage. */
function readChunks(chunks: any[]) {
  const parts: any[] = [];
  for (const chunk of chunks) {
    for (const part of chunk.candidates[0].content.parts) {
      const last = parts.at(-1);
      if (part.text === '' && !part.thought) continue;
      if (last && typeof part.text === 'string' && typeof last.text === 'string' && !last.thought && !part.thought) last.text += part.text;
      else parts.push({ ...part });
    }
  }
  const last = chunks.at(-1);
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: last.candidates[0].finishReason, index: 0 }],
    ...(last.usageMetadata && { usageMetadata: last.usageMetadata }),
    modelVersion: last.modelVersion,
    responseId: last.responseId,
  };
}

const streamed = fc.tuple(answer, fc.array(fc.nat(20), { maxLength: 3 }), fc.boolean());

test('an SSE stream read back is the plain answer: text, thoughts, function calls, finish and usage', () => {
  fc.assert(
    fc.property(streamed, ([answer, cuts, usageFirst]) => {
      const encoder = new GeminiSseEncoder(ids);
      const sse = eventsOf(answer, cuts, usageFirst)
        .map((event) => encoder.push(event))
        .join('');
      const chunks = sse
        .split('\r\n\r\n')
        .filter(Boolean)
        .map((frame) => JSON.parse(frame.slice('data: '.length)));
      assert.deepEqual(readChunks(chunks), generateContentResponseOf(answer, ids));
    }),
  );
});

test('a JSON-array stream parses as one array of the same chunks the SSE stream sends', () => {
  fc.assert(
    fc.property(streamed, ([answer, cuts, usageFirst]) => {
      const events = eventsOf(answer, cuts, usageFirst);
      const sse = new GeminiSseEncoder(ids);
      const array = new GeminiJsonArrayEncoder(ids);
      const chunks = events
        .map((event) => sse.push(event))
        .join('')
        .split('\r\n\r\n')
        .filter(Boolean)
        .map((frame) => JSON.parse(frame.slice('data: '.length)));
      assert.deepEqual(JSON.parse(events.map((event) => array.push(event)).join('')), chunks);
    }),
  );
});

// A conversation Gemini expresses: user text, a model turn of text and calls, then the calls'
// responses by name (ids call_<n>, numbered across the request).
const turn = fc.tuple(
  fc.string({ minLength: 1, maxLength: 10 }),
  fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: undefined }),
  fc.array(fc.tuple(name, args), { maxLength: 2 }),
  args,
);
const settings = fc.record(
  {
    maxOutputTokens: fc.integer({ min: 1, max: 4096 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    topP: fc.double({ min: 0, max: 1, noNaN: true }),
    topK: fc.integer({ min: 1, max: 40 }),
    stopSequences: fc.array(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: [], noNullPrototype: true },
);

test('a request Gemini expresses keeps its messages, tools and settings through the pivot', () => {
  fc.assert(
    fc.property(fc.array(turn, { minLength: 1, maxLength: 3 }), fc.uniqueArray(name, { maxLength: 3 }), settings, (turns, tools, config) => {
      const contents: unknown[] = [];
      const messages: PivotMessage[] = [];
      let n = 0;
      for (const [question, reply, calls, response] of turns) {
        contents.push({ role: 'user', parts: [{ text: question }] });
        messages.push({ role: 'user', content: [{ type: 'text', text: question }] });
        if (reply === undefined && calls.length === 0) continue;
        contents.push({
          role: 'model',
          parts: [...(reply === undefined ? [] : [{ text: reply }]), ...calls.map(([name, args]) => ({ functionCall: { name, args } }))],
        });
        const toolCalls = calls.map(([name, args]) => ({ id: `call_${n++}`, name, arguments: JSON.stringify(args) }));
        messages.push({ role: 'assistant', content: reply === undefined ? [] : [{ type: 'text', text: reply }], ...(toolCalls.length > 0 && { toolCalls }) });
        if (calls.length === 0) continue;
        contents.push({ role: 'user', parts: calls.map(([name]) => ({ functionResponse: { name, response } })) });
        for (const call of toolCalls)
          messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: [{ type: 'text', text: JSON.stringify(response) }] });
      }
      const body = {
        contents,
        ...(tools.length > 0 && { tools: [{ functionDeclarations: tools.map((name) => ({ name, description: `d ${name}` })) }] }),
        generationConfig: config,
      };
      const expected = {
        model: 'upstream',
        system: [],
        messages,
        stream: false,
        ...(config.maxOutputTokens !== undefined && { maxTokens: config.maxOutputTokens }),
        ...(config.temperature !== undefined && { temperature: config.temperature }),
        ...(config.topP !== undefined && { topP: config.topP }),
        ...(config.topK !== undefined && { topK: config.topK }),
        ...(config.stopSequences !== undefined && { stop: config.stopSequences }),
        ...(tools.length > 0 && { tools: tools.map((name) => ({ name, description: `d ${name}` })) }),
      };
      assert.deepEqual(pivotRequestOf(body as never, { upstreamModel: 'upstream', stream: false }), expected);
    }),
  );
});
