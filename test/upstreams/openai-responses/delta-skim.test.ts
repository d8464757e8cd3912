// Reading a Responses stream's output delta from an event's bytes: the same output counted as
// parsing the event counts, and any shape it does not know left to the parse.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ResponsesStreamMeter } from '../../../src/upstreams/openai-responses/client.js';
import { skimOutputDelta } from '../../../src/upstreams/openai-responses/delta-skim.js';
import { meteredAlike, skimmedPiece } from '../../helpers/stream-skim.js';

const skim = (data: string) => skimmedPiece(skimOutputDelta, data);

const textDelta = (delta: unknown, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'response.output_text.delta',
    sequence_number: 4,
    item_id: 'msg_1',
    output_index: 0,
    content_index: 0,
    delta,
    logprobs: [],
    ...fields,
  });

test('an output text or function call arguments delta gives its string, whatever the order of the other fields', () => {
  assert.equal(skim(textDelta(' wörld')), ' wörld');
  assert.equal(skim(textDelta('')), '');
  assert.equal(
    skim(JSON.stringify({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta: '{"city":', sequence_number: 9 })),
    '{"city":',
  );
  assert.equal(
    skim(JSON.stringify({ type: 'response.output_text.delta', delta: 'Hi', obfuscation: 'x9Q', sequence_number: 1.5e3, done: false, n: null })),
    'Hi',
  );
});

test('a delta with escapes is unescaped', () => {
  const piece = 'say "hi"\n\ttab \\ é 😀';
  assert.equal(skim(textDelta(piece)), piece);
});

test('any other shape is left to the parse', () => {
  for (const data of [
    JSON.stringify({ type: 'response.output_text.done', text: 'all', sequence_number: 5 }),
    JSON.stringify({ type: 'response.created', response: { id: 'resp_1' } }),
    JSON.stringify({ sequence_number: 4, type: 'response.output_text.delta', delta: 'x' }), // type not first
    textDelta('x', { logprobs: [{ token: 'x' }] }), // something nested
    textDelta('x', { extra: { a: 1 } }),
    textDelta(7), // a delta that is not a string
    JSON.stringify({ type: 'response.output_text.delta', item_id: 'msg_1' }), // no delta
    `${textDelta('x').slice(0, -1)},"delta":"y"}`, // two deltas: the parse keeps the last
    `${textDelta('x').slice(0, -1)},"type":"response.output_text.done"}`, // a second type
    textDelta('x', { 'd\\u0065lta': 'y' }).replace('d\\\\u0065lta', 'd\\u0065lta'), // a key with an escape
    textDelta('x').replace(',"logprobs"', ', "logprobs"'), // a space
    `${textDelta('x')} `,
    textDelta('x').slice(0, -1),
  ]) {
    assert.equal(skim(data), undefined, data);
  }
});

test('data that JSON.parse refuses is refused, so nothing is counted that parsing would not count', () => {
  for (const data of [
    textDelta('x').replace('"delta":"x"', '"delta":"a\nb"'), // a raw newline
    textDelta('x').replace('"delta":"x"', '"delta":"\\x41"'), // no such escape
    textDelta('x').replace('"item_id":"msg_1"', '"item_id":"\\q"'),
    textDelta('x').replace('"output_index":0', '"output_index":01'),
    textDelta('x').replace('"output_index":0', '"output_index":tru'),
  ]) {
    assert.throws(() => JSON.parse(data), SyntaxError, data);
    assert.equal(skim(data), undefined, data);
  }
});

test('a stream of text and a function call is metered the same, skimmed or parsed, and passes through unchanged', async () => {
  const events = [
    { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', output: [], usage: null } },
    { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { type: 'message', id: 'msg_1', content: [] } },
    ...['Once', ' upon', ' a "time"', ' 😀'].map((delta, i) => JSON.parse(textDelta(delta, { sequence_number: 2 + i }))),
    { type: 'response.output_text.done', sequence_number: 6, item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Once upon a "time" 😀' },
    ...['{"city":', '"Paris"}'].map((delta, i) => ({
      type: 'response.function_call_arguments.delta',
      sequence_number: 7 + i,
      item_id: 'fc_1',
      output_index: 1,
      delta,
    })),
    { type: 'response.completed', sequence_number: 9, response: { id: 'resp_1', status: 'completed', usage: { input_tokens: 5, output_tokens: 9 } } },
  ];
  const sse = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  const skimmed = await meteredAlike(sse, () => new ResponsesStreamMeter('o200k_base'));
  assert.equal(skimmed.skimmed.length, 6);
  assert.equal(skimmed.output, 'Once upon a "time" 😀{"city":"Paris"}');
  assert.equal(skimmed.completed, true);
});
