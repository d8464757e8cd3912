// Round trips: an answer streamed and read back is the answer; a request the responses API can
// express keeps, through the pivot, its messages, tools and settings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { responseOf } from '../../../src/formats/responses/from-pivot.js';
import { ResponsesStreamEncoder } from '../../../src/formats/responses/stream.js';
import { pivotRequestOf } from '../../../src/formats/responses/to-pivot.js';
import type { ResponsesInputItem } from '../../../src/formats/responses/types.js';
import type { PivotEvent, PivotMessage, PivotRequest, PivotResponse } from '../../../src/pivot/types.js';
import { clientServing, sseEvents } from './sse-events.js';

const ids = { id: 'resp_p', model: 'public-model', createdAt: 1700000000 };
const body = { model: 'public-model', input: 'hi', stream: true, include: ['reasoning.encrypted_content'] };

const text = fc.string({ maxLength: 12 });
const name = fc.constantFrom('get_weather', 'search', 'f');
const usage = fc.record(
  { input: fc.nat(1000), output: fc.nat(1000), cacheRead: fc.nat(100), cacheWrite: fc.nat(100), reasoning: fc.nat(100) },
  { requiredKeys: ['input', 'output'], noNullPrototype: true },
);
const answer: fc.Arbitrary<PivotResponse> = fc.record(
  {
    text,
    // a stream tells reasoning blocks apart by their signatures: only a lone block may lack one
    reasoning: fc.oneof(
      fc.array(
        fc.record({ text: fc.string({ minLength: 1, maxLength: 12 }), signature: fc.string({ minLength: 1, maxLength: 6 }) }, { noNullPrototype: true }),
        { maxLength: 2 },
      ),
      fc.tuple(fc.record({ text: fc.string({ minLength: 1, maxLength: 12 }) }, { noNullPrototype: true })),
    ),
    toolCalls: fc.uniqueArray(fc.record({ id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/), name, arguments: fc.json() }, { noNullPrototype: true }), {
      maxLength: 3,
      selector: (call) => call.id,
    }),
    finish: fc.constantFrom('stop', 'length', 'tool_calls', 'stop_sequence', 'refusal'),
    usage,
  },
  { requiredKeys: ['text', 'toolCalls', 'finish'], noNullPrototype: true },
);

/** Splits a string into pieces at the given cut points. */
function pieces(value: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((cut) => cut % (value.length + 1)))].sort((a, b) => a - b);
  return [...at, value.length].map((end, i) => value.slice(i === 0 ? 0 : at[i - 1], end)).filter((piece, i) => piece !== '' || i === 0);
}

/** The answer as a pivot stream, in the order the whole answer lists it; usage before or after the finish. */
function eventsOf(answer: PivotResponse, cuts: number[], usageFirst: boolean): PivotEvent[] {
  const events: PivotEvent[] = [];
  for (const reasoning of answer.reasoning ?? []) {
    for (const piece of pieces(reasoning.text, cuts)) events.push({ type: 'reasoning', text: piece });
    if (reasoning.signature) events.push({ type: 'reasoning', text: '', signature: reasoning.signature });
  }
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

const encode = (events: PivotEvent[]) => {
  const encoder = new ResponsesStreamEncoder(ids, body);
  return events.map((event) => encoder.push(event)).join('');
};

test('a streamed answer ends with the very response the plain answer is, its events numbered 0, 1, 2, …', () => {
  fc.assert(
    fc.property(answer, fc.array(fc.nat(20), { maxLength: 3 }), fc.boolean(), (answer, cuts, usageFirst) => {
      const events = sseEvents(encode(eventsOf(answer, cuts, usageFirst)));
      assert.deepEqual(
        events.map((event) => event.data.sequence_number),
        events.map((_, i) => i),
      );
      assert.ok(events.every((event) => event.event === event.data.type));
      assert.deepEqual(events.at(-1)?.data.response, responseOf(answer, ids, body));
    }),
  );
});

test('a simple reader of the deltas gets the answer’s text, tool calls and usage back', () => {
  fc.assert(
    fc.property(answer, fc.array(fc.nat(20), { maxLength: 3 }), fc.boolean(), (answer, cuts, usageFirst) => {
      let read = '';
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      let usage: unknown;
      for (const { data } of sseEvents(encode(eventsOf(answer, cuts, usageFirst)))) {
        const event = data as Record<string, any>;
        if (event.type === 'response.output_text.delta') read += event.delta;
        if (event.type === 'response.output_item.added' && event.item.type === 'function_call')
          calls.set(event.output_index, { id: event.item.call_id, name: event.item.name, arguments: '' });
        if (event.type === 'response.function_call_arguments.delta') (calls.get(event.output_index) as { arguments: string }).arguments += event.delta;
        if (event.type === 'response.completed' || event.type === 'response.incomplete') usage = event.response.usage;
      }
      assert.deepEqual([read, [...calls.values()], usage], [answer.text, answer.toolCalls, responseOf(answer, ids, body).usage]);
    }),
  );
});

test('the openai client’s final response of a streamed answer is the plain answer', async () => {
  await fc.assert(
    fc.asyncProperty(answer, fc.array(fc.nat(20), { maxLength: 3 }), async (answer, cuts) => {
      const final = await clientServing(encode(eventsOf(answer, cuts, false)))
        .responses.stream({ model: 'public-model', input: 'hi' })
        .finalResponse();
      // output_text, output_parsed, parsed_arguments and a part's parsed are the client's own additions
      const { output_text: outputText, output_parsed: _, output, ...rest } = final as unknown as Record<string, any>;
      const items = (output as Record<string, any>[]).map(({ parsed_arguments: _, ...item }) =>
        item.type === 'message' ? { ...item, content: item.content.map(({ parsed: _, ...part }: Record<string, unknown>) => part) } : item,
      );
      assert.deepEqual([outputText, { ...rest, output: items }], [answer.text, responseOf(answer, ids, body)]);
    }),
    { numRuns: 40 },
  );
});

// A conversation the responses API expresses: user turns, assistant turns of text and calls, then
// each call's output. Ids are unique, as the API requires of call_id.
const toolCalls = fc.uniqueArray(fc.record({ id: fc.stringMatching(/^call_[a-z0-9]{1,8}$/), name, arguments: fc.json() }, { noNullPrototype: true }), {
  maxLength: 2,
  selector: (call) => call.id,
});
const turn = fc.tuple(
  fc.string({ minLength: 1, maxLength: 10 }),
  fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: undefined }),
  toolCalls,
  fc.string({ maxLength: 6 }),
);
const tools = fc.uniqueArray(
  fc.record(
    { name, description: fc.string({ maxLength: 8 }), parameters: fc.constant({ type: 'object', properties: {} }), strict: fc.boolean() },
    { requiredKeys: ['name'], noNullPrototype: true },
  ),
  { maxLength: 2, selector: (tool) => tool.name },
);
const settings = fc.record(
  {
    maxTokens: fc.integer({ min: 1, max: 4096 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    topP: fc.double({ min: 0, max: 1, noNaN: true }),
    user: fc.string({ maxLength: 8 }),
    parallelToolCalls: fc.boolean(),
    toolChoice: fc.constantFrom('auto', 'none', 'required'),
    reasoning: fc.constantFrom({ effort: 'low' as const }, { effort: 'high' as const }),
    responseFormat: fc.constantFrom({ type: 'json_object' as const }, { type: 'json_schema' as const, name: 'out', schema: { type: 'object' }, strict: true }),
  },
  { requiredKeys: [], noNullPrototype: true },
);

test('a request the responses API expresses keeps its messages, tools and settings through the pivot', () => {
  fc.assert(
    fc.property(
      fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: undefined }),
      fc.array(turn, { minLength: 1, maxLength: 3 }),
      tools,
      settings,
      (instructions, turns, tools, settings) => {
        const input: ResponsesInputItem[] = [];
        const messages: PivotMessage[] = [];
        for (const [question, reply, calls, output] of turns) {
          input.push({ role: 'user', content: question });
          messages.push({ role: 'user', content: [{ type: 'text', text: question }] });
          if (reply === undefined && calls.length === 0) continue;
          if (reply !== undefined) input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: reply, annotations: [] }] });
          for (const call of calls) input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
          messages.push({
            role: 'assistant',
            content: reply === undefined ? [] : [{ type: 'text', text: reply }],
            ...(calls.length > 0 && { toolCalls: calls }),
          });
          for (const call of calls) {
            input.push({ type: 'function_call_output', call_id: call.id, output });
            messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: [{ type: 'text', text: output }] });
          }
        }
        const responsesBody = {
          model: 'public-model',
          input,
          ...(instructions !== undefined && { instructions }),
          ...(tools.length > 0 && { tools: tools.map((tool) => ({ type: 'function', ...tool })) }),
          ...(settings.maxTokens !== undefined && { max_output_tokens: settings.maxTokens }),
          ...(settings.temperature !== undefined && { temperature: settings.temperature }),
          ...(settings.topP !== undefined && { top_p: settings.topP }),
          ...(settings.user !== undefined && { user: settings.user }),
          ...(settings.parallelToolCalls !== undefined && { parallel_tool_calls: settings.parallelToolCalls }),
          ...(settings.toolChoice !== undefined && { tool_choice: settings.toolChoice }),
          ...(settings.reasoning !== undefined && { reasoning: settings.reasoning }),
          ...(settings.responseFormat !== undefined && { text: { format: settings.responseFormat } }),
        };
        const expected: PivotRequest = {
          model: 'upstream',
          system: instructions === undefined ? [] : [instructions],
          messages,
          stream: false,
          ...(tools.length > 0 && { tools }),
          ...settings,
        };
        assert.deepEqual(pivotRequestOf(responsesBody, { upstreamModel: 'upstream' }), expected);
      },
    ),
  );
});
