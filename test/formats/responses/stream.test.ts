import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { APIError } from 'openai';
import { ResponsesStreamEncoder } from '../../../src/formats/responses/stream.js';
import type { PivotEvent } from '../../../src/pivot/types.js';
import { clientServing, sseEvents } from './sse-events.js';

const ids = { id: 'resp_1', model: 'public-model', createdAt: 1700000000 };
const body = { model: 'public-model', input: 'hi', stream: true };

function encode(events: PivotEvent[], encoder = new ResponsesStreamEncoder(ids, body)): string {
  return events.map((event) => encoder.push(event)).join('');
}

/** The events between the two snapshots and the terminal one, without their sequence numbers. */
const middle = (sse: string) => sseEvents(sse).map(({ data: { sequence_number: _, ...data } }) => data);

test('a streamed text answer is written event by event as the API documents it', async () => {
  const { ids, body, events } = JSON.parse(await readFile(new URL('./fixtures/stream-text.json', import.meta.url), 'utf8'));
  const expected = await readFile(new URL('./fixtures/stream-text.sse', import.meta.url), 'utf8');
  assert.equal(encode(events, new ResponsesStreamEncoder(ids, body)), expected);
});

test('a text delta from the template is the bytes JSON.stringify gives for the event', () => {
  const sse = encode([{ type: 'text', text: 'a "quoted"\nline \u2028 é' }]);
  const delta = sseEvents(sse).at(-1);
  const expected = {
    type: 'response.output_text.delta',
    sequence_number: 4,
    item_id: 'msg_1_0',
    output_index: 0,
    content_index: 0,
    delta: 'a "quoted"\nline \u2028 é',
    logprobs: [],
  };
  assert.equal(sse.split('\n\n').at(-2), `event: response.output_text.delta\ndata: ${JSON.stringify(expected)}`);
  assert.deepEqual(delta?.data, expected);
});

test('a streamed function call is one item with argument deltas, as the recorded OpenAI stream has it', () => {
  const sse = encode([
    { type: 'tool_call', index: 0, id: 'call_2FQd', name: 'get_weather', arguments: '' },
    { type: 'tool_call', index: 0, arguments: '{"city":' },
    { type: 'tool_call', index: 0, arguments: '"Beijing"}' },
    { type: 'finish', finish: 'tool_calls' },
    { type: 'done' },
  ]);
  const item = { type: 'function_call', id: 'fc_1_0', call_id: 'call_2FQd', name: 'get_weather' };
  assert.deepEqual(middle(sse).slice(2, -1), [
    { type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1_0', output_index: 0, delta: '{"city":' },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1_0', output_index: 0, delta: '"Beijing"}' },
    { type: 'response.function_call_arguments.done', item_id: 'fc_1_0', output_index: 0, name: 'get_weather', arguments: '{"city":"Beijing"}' },
    { type: 'response.output_item.done', output_index: 0, item: { ...item, arguments: '{"city":"Beijing"}', status: 'completed' } },
  ]);
});

test('reasoning is a reasoning item with summary events, closed before the message opens', () => {
  const sse = encode([{ type: 'reasoning', text: 'Think.' }, { type: 'text', text: 'Hi' }, { type: 'done' }]);
  const at = { item_id: 'rs_1_0', output_index: 0, summary_index: 0 };
  assert.deepEqual(middle(sse).slice(2, 8), [
    { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1_0', summary: [] } },
    { type: 'response.reasoning_summary_part.added', ...at, part: { type: 'summary_text', text: '' } },
    { type: 'response.reasoning_summary_text.delta', ...at, delta: 'Think.' },
    { type: 'response.reasoning_summary_text.done', ...at, text: 'Think.' },
    { type: 'response.reasoning_summary_part.done', ...at, part: { type: 'summary_text', text: 'Think.' } },
    { type: 'response.output_item.done', output_index: 0, item: { type: 'reasoning', id: 'rs_1_0', summary: [{ type: 'summary_text', text: 'Think.' }] } },
  ]);
});

test('usage that comes after the finish is in the completed response', () => {
  const sse = encode([{ type: 'text', text: 'Hi' }, { type: 'finish', finish: 'stop' }, { type: 'usage', usage: { input: 3, output: 1 } }, { type: 'done' }]);
  const last = sseEvents(sse).at(-1)?.data as unknown as { type: string; response: { usage: unknown } };
  assert.deepEqual(
    [last.type, last.response.usage],
    [
      'response.completed',
      {
        input_tokens: 3,
        input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        output_tokens: 1,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 4,
      },
    ],
  );
});

test('an answer cut by the token limit ends with response.incomplete for max_output_tokens', () => {
  const sse = encode([{ type: 'text', text: 'Once' }, { type: 'finish', finish: 'length' }, { type: 'done' }]);
  const last = sseEvents(sse).at(-1)?.data as unknown as { type: string; response: { status: string; incomplete_details: unknown } };
  assert.deepEqual([last.type, last.response.status, last.response.incomplete_details], ['response.incomplete', 'incomplete', { reason: 'max_output_tokens' }]);
});

test('a failure is an error event and nothing is written after it', () => {
  const encoder = new ResponsesStreamEncoder(ids, body);
  const sse = encode([{ type: 'text', text: 'Hi' }], encoder) + encoder.fail('upstream broke');
  const after = encoder.push({ type: 'done' }) + encoder.fail('again');
  const last = sseEvents(sse).at(-1);
  assert.deepEqual(
    [last, after],
    [
      {
        event: 'error',
        data: {
          type: 'error',
          code: 'server_error',
          message: 'upstream broke',
          param: null,
          sequence_number: 5,
          error: { type: 'server_error', code: 'server_error', message: 'upstream broke', param: null },
        },
      },
      '',
    ],
  );
});

test('the openai client reads a streamed answer into the final response: reasoning, text and a function call', async () => {
  const sse = encode([
    { type: 'reasoning', text: 'Weather needed.' },
    { type: 'text', text: 'Checking ' },
    { type: 'text', text: 'now.' },
    { type: 'tool_call', index: 0, id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'usage', usage: { input: 10, output: 20, reasoning: 5 } },
    { type: 'finish', finish: 'tool_calls' },
    { type: 'done' },
  ]);
  const final = await clientServing(sse).responses.stream({ model: 'public-model', input: 'hi' }).finalResponse();
  const call = final.output.find((item) => item.type === 'function_call');
  assert.deepEqual(
    [final.output_text, final.output.map((item) => item.type), call && [call.call_id, call.name, call.arguments], final.usage?.total_tokens],
    ['Checking now.', ['reasoning', 'message', 'function_call'], ['call_a', 'get_weather', '{"city":"Paris"}'], 30],
  );
});

test('the openai client raises a failed stream as an APIError carrying the message', async () => {
  const encoder = new ResponsesStreamEncoder(ids, body);
  const sse = encode([{ type: 'text', text: 'Hi' }], encoder) + encoder.fail('upstream broke');
  const stream = await clientServing(sse).responses.create({ model: 'public-model', input: 'hi', stream: true });
  await assert.rejects(
    async () => {
      for await (const _ of stream);
    },
    (error: unknown) => error instanceof APIError && /upstream broke/.test(error.message),
  );
});
