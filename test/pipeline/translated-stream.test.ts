// A stream translated through the pivot as one Transform, shown on chat SSE bytes in and messages
// events out (ChatStreamDecoder, MessagesStreamEncoder): the meter, the failure rules (a 502 before anything went out, the messages error event after), the
// caller leaving, backpressure and the end-marker gate, all without an upstream or a gateway.
import assert from 'node:assert/strict';
import { PassThrough, type Readable } from 'node:stream';
import { test } from 'node:test';
import { DEFAULT_TOKENIZER } from '../../src/billing/tokens.js';
import { MessagesStreamEncoder } from '../../src/formats/messages/from-pivot.js';
import { holdEndMarkerForSettle } from '../../src/pipeline/end-marker-gate.js';
import { translatePivotStream } from '../../src/pipeline/translated-stream.js';
import { ChatStreamDecoder } from '../../src/upstreams/openai-chat/from-upstream.js';
import { PassThroughTap } from '../../src/upstreams/tap.js';
import { pendingSettle } from '../upstreams/pending-settle.js';

function translated() {
  const upstream = new PassThrough();
  const controller = new AbortController();
  const { body, meter } = translatePivotStream(upstream, {
    decoder: new ChatStreamDecoder(),
    encoder: new MessagesStreamEncoder({ id: 'msg_1', model: 'claude-test', inputTokens: 20 }),
    tokenizer: DEFAULT_TOKENIZER,
    signal: controller.signal,
  });
  return { upstream, meter, body, controller };
}

const text = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
const USAGE = `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } })}\n\n`;
const DONE = 'data: [DONE]\n\n';
const ERROR = `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n`;

interface Outcome {
  events: { type: string; data: any }[];
  error?: Error;
}

/** Reads `body` to its end or its error, the messages events parsed. */
function readOut(body: Readable): Promise<Outcome> {
  let received = '';
  body.on('data', (chunk) => {
    received += String(chunk);
  });
  const parse = () =>
    received
      .split('\n\n')
      .filter((raw) => raw.length > 0)
      .map((raw) => {
        const [eventLine = '', dataLine = ''] = raw.split('\n');
        return { type: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) };
      });
  return new Promise((resolve) => {
    body.once('end', () => resolve({ events: parse() }));
    body.once('error', (error) => resolve({ events: parse(), error }));
  });
}

const types = (outcome: Outcome) => outcome.events.map((event) => event.type);
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A translated stream behind the end-marker gate, with a settle the test lands by hand, and what the caller received. */
function gatedTranslation() {
  const { upstream, meter, body } = translated();
  const { settle, land } = pendingSettle();
  const gated = holdEndMarkerForSettle(body, meter, settle);
  const out = readOut(gated);
  let received = '';
  gated.on('data', (chunk) => {
    received += String(chunk);
  });
  return { upstream, body, gated, out, land, received: () => received };
}

test('an event split across chunk boundaries, a multi-byte character included, is translated once it is whole', async () => {
  const { upstream, meter, body } = translated();
  const out = readOut(body);
  const bytes = Buffer.from(text('héllo') + USAGE + DONE);
  const cuts = [3, 20, bytes.indexOf(Buffer.from('é')) + 1, bytes.length - 5];
  let from = 0;
  for (const cut of cuts) {
    upstream.write(bytes.subarray(from, cut));
    from = cut;
    await tick();
  }
  upstream.end(bytes.subarray(from));
  const outcome = await out;
  assert.equal(outcome.error, undefined);
  assert.deepEqual(types(outcome), [
    'message_start',
    'ping',
    'content_block_start',
    'content_block_delta',
    'content_block_stop',
    'message_delta',
    'message_stop',
  ]);
  assert.equal(outcome.events[3]?.data.delta.text, 'héllo');
  assert.equal(meter.completed, true);
  assert.deepEqual(meter.reported(), { input_token: 7, output_token: 3 }, "the upstream's usage, not the estimate message_start showed");
});

test('a malformed line is skipped and the stream goes on', async () => {
  const { upstream, meter, body } = translated();
  const out = readOut(body);
  upstream.end(`${text('a')}data: {"choices": [\n\n${text('b')}${DONE}`);
  const outcome = await out;
  assert.equal(outcome.error, undefined);
  const deltas = outcome.events.filter((event) => event.type === 'content_block_delta').map((event) => event.data.delta.text);
  assert.deepEqual(deltas, ['a', 'b']);
  assert.equal(meter.completed, true);
});

test('an upstream error event before any output fails the stream, so the call is a 502', async () => {
  const { upstream, meter, body } = translated();
  const out = readOut(body);
  upstream.write(ERROR);
  const outcome = await out;
  assert.match(String(outcome.error?.message), /error event/);
  assert.deepEqual(outcome.events, []);
  assert.equal(meter.completed, false);
});

test('an upstream error event after output ends the stream with the messages error event, and the upstream is let go', async () => {
  const { upstream, meter, body } = translated();
  const out = readOut(body);
  upstream.write(text('partial'));
  await tick();
  upstream.write(ERROR + text('never seen'));
  const outcome = await out;
  assert.equal(outcome.error, undefined);
  assert.deepEqual(types(outcome), ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
  assert.equal(meter.failed, true);
  assert.equal(meter.completed, false);
  await tick();
  assert.equal(upstream.destroyed, true);
});

test('an upstream that ends without [DONE] fails the stream when nothing went out, and ends it with the error event after', async () => {
  const empty = translated();
  const emptyOut = readOut(empty.body);
  empty.upstream.end();
  assert.match(String((await emptyOut).error?.message), /before its end marker/);

  const cut = translated();
  const cutOut = readOut(cut.body);
  cut.upstream.end(text('half an answer') + USAGE);
  const outcome = await cutOut;
  assert.equal(outcome.error, undefined);
  assert.equal(types(outcome).at(-1), 'error');
  assert.equal(cut.meter.completed, false);
  assert.equal(cut.meter.failed, true);
});

test('an upstream body that breaks mid-stream ends with the error event, never with its half-received event', async () => {
  const { upstream, meter, body } = translated();
  const out = readOut(body);
  upstream.write(`${text('first')}data: {"choices":[{"delta":{"content":"cut`);
  await tick();
  upstream.destroy(new Error('other side closed'));
  const outcome = await out;
  assert.equal(outcome.error, undefined);
  assert.deepEqual(types(outcome), ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
  assert.equal(meter.completed, false);
});

test('a caller that left fails the stream even after output, and the caller closing the stream stops the upstream', async () => {
  const aborted = translated();
  const abortedOut = readOut(aborted.body);
  aborted.upstream.write(text('some'));
  await tick();
  aborted.controller.abort();
  aborted.upstream.destroy(new DOMException('This operation was aborted', 'AbortError'));
  const outcome = await abortedOut;
  assert.equal(outcome.error?.name, 'AbortError');
  assert.notEqual(types(outcome).at(-1), 'error');

  const left = translated();
  left.body.resume();
  left.upstream.write(text('some'));
  await tick();
  left.body.destroy();
  await tick();
  assert.equal(left.upstream.destroyed, true);
});

test('after [DONE] the stream ends at message_stop: what the upstream sends after is ignored and the upstream is let go', async () => {
  const { upstream, body } = translated();
  const out = readOut(body);
  upstream.write(text('done') + DONE + text('trailing'));
  const outcome = await out;
  assert.equal(types(outcome).at(-1), 'message_stop');
  assert.equal(outcome.events.filter((event) => event.type === 'content_block_delta').length, 1);
  await tick();
  assert.equal(upstream.destroyed, true);
});

test('the upstream is read no faster than the caller reads: unread output stops the pipe', async () => {
  const { upstream, body } = translated();
  const piece = 'x'.repeat(1_000);
  let written = 0;
  let flowing = true;
  while (written < 300 && flowing) {
    flowing = upstream.write(text(piece));
    written += 1;
  }
  await tick();
  // 300 kB offered, none read: the tap and its output buffer hold a few highWaterMarks, the rest waits upstream.
  assert.ok(written < 300, 'the upstream saw backpressure');
  assert.ok(body.readableLength < 64 * 1024, `output buffered: ${body.readableLength} bytes`);
  assert.ok(upstream.readableLength > 0, 'the rest waits in the upstream');

  const out = readOut(body);
  for (; written < 300; written++) if (!upstream.write(text(piece))) await new Promise((resolve) => upstream.once('drain', resolve));
  upstream.end(DONE);
  const outcome = await out;
  assert.equal(outcome.events.filter((event) => event.type === 'content_block_delta').length, 300);
});

test('a chat stream that arrives in one chunk sends its translated text at once; message_delta and message_stop wait for the settle', async () => {
  const { upstream, out, land, received } = gatedTranslation();
  upstream.end(text('hello') + USAGE + DONE);
  await tick();
  assert.match(received(), /content_block_delta/, 'the text before the end marker is not held for the settle');
  assert.doesNotMatch(received(), /message_delta|message_stop/, 'the end waits for the settle');
  land();
  const outcome = await out;
  assert.equal(types(outcome).at(-1), 'message_stop');
});

test('the end-marker gate holds message_stop, in place, until the settle lands', async () => {
  const { upstream, body, gated, out, land, received } = gatedTranslation();
  assert.ok(gated instanceof PassThroughTap);
  assert.equal(gated, body, 'no second stream stage');
  upstream.write(text('hi'));
  await tick();
  assert.match(received(), /content_block_delta/);
  upstream.end(USAGE + DONE);
  await tick();
  assert.doesNotMatch(received(), /message_stop/, 'the end marker waits for the settle');
  land();
  const outcome = await out;
  assert.equal(types(outcome).at(-1), 'message_stop');
});
