// The SSE tap: events pass through whole and unchanged, however the bytes are cut.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { test } from 'node:test';
import { blankLineLength, createSseTap, findEventEnd, parseSseEvent, type SseEvent } from '../../src/upstreams/sse.js';

const upstream = 'data: {"a":1}\n\nevent: ping\ndata: {}\n\ndata: {"b":"é"}\n\ndata: [DONE]\n\n';

async function through(chunks: (string | Buffer)[], keep: (e: SseEvent) => boolean | undefined = () => true) {
  const seen: SseEvent[] = [];
  const tap = createSseTap((event) => {
    seen.push(event);
    return keep(event);
  });
  const out = await text(Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).pipe(tap));
  return { out, seen };
}

test('events pass through unchanged and are each read once', async () => {
  const { out, seen } = await through([upstream]);
  assert.equal(out, upstream);
  assert.deepEqual(seen, [
    { event: undefined, data: '{"a":1}' },
    { event: 'ping', data: '{}' },
    { event: undefined, data: '{"b":"é"}' },
    { event: undefined, data: '[DONE]' },
  ]);
});

test('an event split across chunks, even inside a multi-byte character, is read whole', async () => {
  const bytes = Buffer.from(upstream);
  const chunks = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
  const { out, seen } = await through(chunks);
  assert.equal(out, upstream);
  assert.equal(seen[2]?.data, '{"b":"é"}');
});

test('a chunk of whole events that all go on is forwarded as the very bytes that came', async () => {
  const tap = createSseTap(() => true);
  const chunk = Buffer.from(upstream);
  const forwarded: unknown[] = [];
  tap.on('data', (out) => forwarded.push(out));
  tap.end(chunk);
  await new Promise((resolve) => tap.once('end', resolve));
  assert.equal(forwarded.length, 1);
  assert.equal(forwarded[0], chunk); // the same Buffer: not decoded, joined and encoded again
});

test('a character cut between chunks goes on once, whole, with the event it belongs to', async () => {
  const e = Buffer.from('é');
  const first = Buffer.concat([Buffer.from('data: {"a":1}\n\n'), e.subarray(0, 1)]);
  const second = Buffer.concat([e.subarray(1), Buffer.from('data: 2\n\ndata: 3')]);
  const { out } = await through([first, second]);
  assert.equal(out, 'data: {"a":1}\n\nédata: 2\n\ndata: 3\n\n');
});

test('an event the reader refuses is kept from the client', async () => {
  const { out } = await through([upstream], (e) => e.event !== 'ping');
  assert.equal(out, 'data: {"a":1}\n\ndata: {"b":"é"}\n\ndata: [DONE]\n\n');
});

test('CRLF framing is understood and kept', async () => {
  const crlf = 'data: {"a":1}\r\n\r\ndata: [DONE]\r\n\r\n';
  const { out, seen } = await through([crlf]);
  assert.equal(out, crlf);
  assert.deepEqual(
    seen.map((e) => e.data),
    ['{"a":1}', '[DONE]'],
  );
});

test('a last event without its closing blank line still reaches the client', async () => {
  const { out, seen } = await through(['data: {"a":1}\n\ndata: {"end":true}']);
  assert.equal(out, 'data: {"a":1}\n\ndata: {"end":true}\n\n');
  assert.equal(seen.length, 2);
});

test('multi-line data joins with newlines', () => {
  assert.deepEqual(parseSseEvent('event: x\ndata: one\ndata:two'), { event: 'x', data: 'one\ntwo' });
});

test('an event ends at the first blank line, whatever mix of CR LF and LF makes it', () => {
  // The rule is the regular expression /\r?\n\r?\n/; the scan must find what it finds, on every mix.
  const pieces = ['a', '\n', '\r', '\r\n', ' '];
  const texts = [''];
  for (let length = 0; length < 6; length++) {
    for (const t of texts.splice(0)) for (const p of pieces) texts.push(t + p);
    for (const t of texts) {
      const expected = /\r?\n\r?\n/.exec(t);
      const bytes = Buffer.from(t); // one byte a character here: the offsets are the same
      const at = findEventEnd(bytes, 0, { firstNewline: -1, lines: 0 });
      const found = at === -1 ? undefined : { at, length: blankLineLength(bytes, at) };
      assert.deepEqual(found, expected ? { at: expected.index, length: expected[0].length } : undefined, JSON.stringify(t));
    }
  }
});

test('lines end at LF or CR LF, and a lone CR stays in the data', () => {
  assert.deepEqual(parseSseEvent('event: a\r\ndata: one\r\ndata:two\rthree'), { event: 'a', data: 'one\ntwo\rthree' });
  assert.deepEqual(parseSseEvent('data:'), { event: undefined, data: '' });
  assert.deepEqual(parseSseEvent(': comment\nid: 7'), { event: undefined, data: '' });
});

test('an event the skimmer reads from its bytes goes on unchanged and is never shown to the reader', async () => {
  const body =
    'data: {"skim":1}\n\ndata: {"read":1}\n\ndata: {"skim":2}\r\n\r\nevent: x\ndata: {"skim":3}\n\nevent: y\r\ndata: {"skim":4}\r\n\r\n' +
    'id: 1\ndata: {"skim":5}\n\ndata: {"skim":6}\ndata: {"skim":7}\n\nevent: z\n\n';
  const skimmed: string[] = [];
  const seen: string[] = [];
  const tap = createSseTap(
    (event) => {
      seen.push(event.data);
      return true;
    },
    {
      skim: (bytes, start, end) => {
        const data = bytes.toString('utf8', start, end);
        if (!data.includes('skim')) return false;
        skimmed.push(data);
        return true;
      },
    },
  );
  const out = await text(Readable.from([Buffer.from(body)]).pipe(tap));
  assert.equal(out, body);
  // Only single data lines are offered, named by an event line or not: an event with another
  // field, two data lines or no data line is read.
  assert.deepEqual(skimmed, ['{"skim":1}', '{"skim":2}', '{"skim":3}', '{"skim":4}']);
  assert.deepEqual(seen, ['{"read":1}', '{"skim":5}', '{"skim":6}\n{"skim":7}', '']);
});

test('an event the model rename changes is renamed, not skimmed; the others are skimmed as they came', async () => {
  const event = (model: string, n: number) => `data: {"model":"${model}","n":${n}}\n\n`;
  const body = [event('up', 1), event('other', 2), event('up', 3), event('up', 4), event('other', 5)].join('');
  const skimmed: string[] = [];
  const tap = createSseTap(() => true, {
    rename: { upstream: 'up', public: 'públic' },
    skim: (bytes, start, end) => {
      skimmed.push(bytes.toString('utf8', start, end));
      return true;
    },
  });
  // Fed twice as the same Buffer: what the rename found in the first must not be trusted for the second.
  const chunk = Buffer.from(body);
  const out = await text(Readable.from([chunk, chunk]).pipe(tap));
  const renamed = body.replaceAll('"model":"up"', '"model":"públic"');
  assert.equal(out, renamed + renamed);
  assert.deepEqual(skimmed, ['{"model":"other","n":2}', '{"model":"other","n":5}', '{"model":"other","n":2}', '{"model":"other","n":5}']);
});
