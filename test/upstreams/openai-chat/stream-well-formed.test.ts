// Whatever chunks a chat upstream sends, the events ChatStreamDecoder and MessagesStreamEncoder make
// of them form a stream an Anthropic client can hold: message_start and ping first, blocks numbered 0,1,2… and strictly one at a time, every delta on the
// open block and of its kind, one message_delta after the last block, message_stop (or error) last.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MessagesStreamEncoder } from '../../../src/formats/messages/from-pivot.js';
import type { MessagesStreamEvent } from '../../../src/upstreams/anthropic/types.js';
import { ChatStreamDecoder } from '../../../src/upstreams/openai-chat/from-upstream.js';
import type { ChatCompletionChunk } from '../../../src/upstreams/openai-chat/types.js';
import { eventsOfSse } from '../../formats/messages/sse-events.js';

const piece = fc.constantFrom(undefined, null, '', 'a', ' b', '{"x":', '1}');
const fragment = fc.record(
  {
    index: fc.constantFrom(0, 1, 2, undefined),
    id: fc.constantFrom(undefined, 'call_a', 'call_b', 'call_c'),
    function: fc.record({ name: fc.constantFrom(undefined, 'f', 'g'), arguments: piece }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const usage = fc.record({
  prompt_tokens: fc.nat(500),
  completion_tokens: fc.nat(500),
  prompt_tokens_details: fc.option(fc.record({ cached_tokens: fc.nat(600) }), { nil: undefined }),
});
const chunk: fc.Arbitrary<ChatCompletionChunk> = fc
  .record({
    choices: fc.oneof(
      fc.constant([]),
      fc
        .tuple(
          fc.record(
            { content: piece, reasoning_content: piece, tool_calls: fc.option(fc.array(fragment, { maxLength: 3 }), { nil: undefined }) },
            { requiredKeys: [] },
          ),
          fc.constantFrom(null, null, null, 'stop', 'length', 'tool_calls', 'content_filter'),
        )
        .map(([delta, finish]) => [{ index: 0, delta, finish_reason: finish }]),
    ),
    usage: fc.option(usage, { nil: null }),
  })
  .map((c) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk' as const, ...c }) as ChatCompletionChunk);
/** `[DONE]`; a broken upstream; a body that ends without `[DONE]`, which the stream tap fails too. */
const ending = fc.constantFrom('end' as const, 'fail' as const, 'none' as const);

const frameOf = (chunk: ChatCompletionChunk | '[DONE]') => Buffer.from(`data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`);

const DELTA_OF = { text: 'text_delta', tool_use: 'input_json_delta', thinking: 'thinking_delta', redacted_thinking: '-' };

function assertWellFormed(events: MessagesStreamEvent[], failed: boolean): void {
  const [start, ping, ...rest] = events;
  assert.equal(start?.type, 'message_start');
  assert.equal(ping?.type, 'ping');
  let open: { index: number; kind: keyof typeof DELTA_OF } | undefined;
  let next = 0;
  let messageDelta = false;
  for (const [i, event] of rest.entries()) {
    const last = i === rest.length - 1;
    assert.ok(!messageDelta || event.type === 'message_stop', `only message_stop may follow message_delta, got ${event.type}`);
    switch (event.type) {
      case 'content_block_start':
        assert.equal(open, undefined, 'a block started while another was open');
        assert.equal(event.index, next++);
        open = { index: event.index, kind: event.content_block.type };
        break;
      case 'content_block_delta': {
        assert.equal(event.index, open?.index, 'a delta for a block that is not open');
        assert.equal(event.delta.type, DELTA_OF[open!.kind]);
        const text = 'text' in event.delta ? event.delta.text : 'partial_json' in event.delta ? event.delta.partial_json : 'x';
        assert.notEqual(text, '', 'an empty delta');
        break;
      }
      case 'content_block_stop':
        assert.equal(event.index, open?.index, 'a stop for a block that is not open');
        open = undefined;
        break;
      case 'message_delta':
        assert.equal(open, undefined, 'message_delta with a block open');
        messageDelta = true;
        break;
      case 'message_stop':
        assert.ok(messageDelta && last && !failed, 'message_stop must be last, after message_delta');
        break;
      case 'error':
        assert.ok(last && failed, 'error must be last, and only on failure');
        break;
      default:
        assert.fail(`unexpected ${event.type}`);
    }
  }
  assert.equal(rest.at(-1)?.type ?? start?.type, failed ? 'error' : 'message_stop');
}

test('any chunk sequence, ended or failed, gives a well-formed event stream that keeps all text before the finish', () => {
  fc.assert(
    fc.property(fc.array(chunk, { maxLength: 12 }), ending, fc.array(chunk, { maxLength: 2 }), (chunks, end, after) => {
      const decoder = new ChatStreamDecoder();
      const encoder = new MessagesStreamEncoder({ id: 'msg_1', model: 'm', inputTokens: 7 });
      const encode = (chunk: ChatCompletionChunk | '[DONE]') => decoder.push(frameOf(chunk)).reduce((sse, event) => sse + encoder.push(event), '');
      const before = chunks.map(encode).join('');
      // a failure after message_delta lost only [DONE]: the message ends whole
      const failed = end !== 'end' && !before.includes('event: message_delta');
      const last = end === 'end' ? encode('[DONE]') : decoder.end().reduce((sse, event) => sse + encoder.push(event), '') + encoder.fail('boom');
      const events = eventsOfSse(before + last);
      assert.equal(after.map(encode).join(''), '', 'nothing after the end');
      assert.equal(encoder.push({ type: 'done' }) + encoder.fail('again'), '');
      if (failed && before === '') {
        assert.deepEqual(
          events.map((e) => e.type),
          ['error'],
        );
        return;
      }
      assertWellFormed(events, failed);

      const finishAt = chunks.findIndex((c) => c.choices[0]?.finish_reason);
      const sent = (finishAt < 0 ? chunks : chunks.slice(0, finishAt + 1)).map((c) => c.choices[0]?.delta.content ?? '').join('');
      const streamed = events.map((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? e.delta.text : '')).join('');
      assert.equal(streamed, sent);
    }),
    { numRuns: 2000 },
  );
});
