// Skimming a chat chunk for its text must count exactly what parsing it would, or step aside.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessagesStreamEncoder } from '../../../src/formats/messages/from-pivot.js';
import { carriesNothingMetered, plainTextDelta, TextChunkSkimmer } from '../../../src/upstreams/openai-chat/chunk-skim.js';
import { ChatStreamDecoder } from '../../../src/upstreams/openai-chat/from-upstream.js';
import type { ChatCompletionChunk } from '../../../src/upstreams/openai-chat/types.js';
import { ChatStreamMeter } from '../../../src/upstreams/openai-chat/usage.js';
import { meteredAlike } from '../../helpers/stream-skim.js';

const chunk = (choices: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices, usage: null, ...extra });
const text = (content: string) => chunk([{ index: 0, delta: { content }, logprobs: null, finish_reason: null }]);

/** What a meter takes from a chunk by parsing it: its text, and whether anything else changed. */
function parsedReading(data: string): { text: string; other: boolean } {
  const meter = new ChatStreamMeter('o200k_base');
  meter.observe(JSON.parse(data) as ChatCompletionChunk);
  return { text: meter.output.pendingText(), other: meter.failed || meter.usage !== undefined || meter.output.pieces > 1 };
}

const TEXTS = [
  'hello',
  ' w1',
  '',
  'quote " and backslash \\ here',
  'line\nbreak\ttab',
  'é 漢字 🎉',
  '\u0000\u001f',
  '"usage":{"x":1}',
  '"delta":{"content":"x"}',
  '\\"error\\"',
];

test('a text-only chunk is skimmed to the text that parsing it would count', () => {
  for (const t of TEXTS) {
    const data = text(t);
    const reading = parsedReading(data);
    assert.equal(reading.other, false);
    if (t === '') continue; // an empty text is counted as nothing either way
    assert.equal(plainTextDelta(data), t, data);
    assert.equal(plainTextDelta(data), reading.text);
  }
});

test("the sandbox's and OpenAI's text chunks take the skim, not the parse", () => {
  assert.equal(plainTextDelta('{"choices":[{"index":0,"delta":{"content":"least"}}]}'), 'least');
  const sandbox =
    '{"id":"chatcmpl-c30d","object":"chat.completion.chunk","created":1735689600,"model":"sandbox-chat","choices":[{"index":0,"delta":{"content":" w2"},"logprobs":null,"finish_reason":null}],"usage":null}';
  const openai =
    '{"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1728933352,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}';
  assert.equal(plainTextDelta(sandbox), ' w2');
  assert.equal(plainTextDelta(openai), 'Hello');
});

test('a chunk with anything else the meter reads is left to the parse', () => {
  const others = [
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'a', reasoning_content: 'b' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { reasoning: 'r' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'a' }, finish_reason: null }], { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
    chunk([{ index: 0, delta: { content: 'a' }, finish_reason: null }], { error: { message: 'boom' } }),
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, finish_reason: null }]),
    chunk([
      { index: 0, delta: { content: 'a' }, finish_reason: null },
      { index: 1, delta: { content: 'b' }, finish_reason: null },
    ]),
    chunk([{ delta: { content: 'a' }, index: 0, finish_reason: null }]),
    JSON.stringify({ nested: { choices: [{ index: 0, delta: { content: 'a' } }] }, choices: [] }),
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    chunk([{ index: 0, delta: { content: 'last words' }, finish_reason: 'length' }]),
    chunk([], { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
    '{"choices":[{"index":0,"delta":{"content":"bad \\q escape"}}]}',
    '{"choices":[{"index":0,"delta":{"content":"unterminated}',
    '{"choices":[{"index":0,"delta":{"content":"cut short"}',
    '{"choices":[{"index":0,"delta":{"content":"cut short"}}]',
    '{"choices":[{"index":0,"delta":{"content":"closed early"}}]}}',
    '{"choices":[{"index":0,"delta":{"content":"closed early"}}]},"x":{}}',
    'not json',
  ];
  for (const data of others) assert.equal(plainTextDelta(data), undefined, data);
});

test('a model or id that spells a key does not trip the skim into a wrong answer', () => {
  const data = chunk([{ index: 0, delta: { content: 'x' }, finish_reason: null }], { model: '"delta"', id: '{[' });
  assert.equal(plainTextDelta(data), 'x');
  assert.equal(parsedReading(data).text, 'x');
});

test('a stream translated to Messages events from skimmed chunks is the one translated from parsed chunks', () => {
  const stream = [
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
    ...TEXTS.map(text),
    chunk([{ index: 0, delta: { content: 'and the end' }, logprobs: null, finish_reason: 'stop' }]),
    chunk([], { usage: { prompt_tokens: 7, completion_tokens: 12, total_tokens: 19 } }),
  ];
  // the same chunks spaced out as JSON allows: the skim steps aside, so the decoder parses each one
  const spaced = stream.map((data) => JSON.stringify(JSON.parse(data), null, 1).replaceAll('\n', ''));
  assert.equal(stream.filter((data) => plainTextDelta(data) !== undefined).length, TEXTS.length);
  assert.deepEqual(
    spaced.filter((data) => plainTextDelta(data) !== undefined),
    [],
  );
  const translate = (chunks: string[]) => {
    const decoder = new ChatStreamDecoder();
    const encoder = new MessagesStreamEncoder({ id: 'msg_1', model: 'claude-x', inputTokens: 7 });
    return [...chunks, '[DONE]'].map((data) => decoder.push(Buffer.from(`data: ${data}\n\n`)).reduce((sse, event) => sse + encoder.push(event), ''));
  };
  assert.deepEqual(translate(stream), translate(spaced));
});

/** A stream whose chunks around the text change: finishing, usage, an error, a new id, a repeated key, one cut short. */
function streamOfChangingSurroundings(): string[] {
  const choice = (delta: unknown, finish: string | null = null) => [{ index: 0, delta, logprobs: null, finish_reason: finish }];
  const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
  return [
    chunk(choice({ role: 'assistant', content: '' })),
    ...TEXTS.map(text),
    chunk(choice({ content: 'same head, finishing' }, 'stop')),
    chunk(choice({ content: 'same length, finishing' }, 'st')), // "st" is as long as null
    chunk(choice({ content: 'same head, usage after' }), { usage }),
    chunk(choice({ content: 'same head, error after' }), { usage: null, error: { message: 'x' } }),
    chunk(choice({ content: 'same length, error before' })).replace('"created":1', '"error":123'), // as long as the head it replaces
    chunk(choice({ content: 'a new id' }), { id: 'chatcmpl-2' }),
    text('and back'),
    chunk(choice({ content: 'x' })).replace('"usage":null', '"usage":null,"usage":{"prompt_tokens":1}'),
    chunk(choice({ content: 'unterminated' })).slice(0, -40),
  ];
}

test("a stream's skimmer answers for every chunk what a fresh check would, as the chunks around the text change", () => {
  const stream = streamOfChangingSurroundings();
  const skimmer = new TextChunkSkimmer();
  const answers = stream.map((data) => skimmer.read(data));
  assert.deepEqual(
    answers,
    stream.map((data) => plainTextDelta(data)),
  );
  assert.deepEqual(answers.slice(-9), [undefined, undefined, undefined, undefined, undefined, 'a new id', 'and back', undefined, undefined]);
  assert.deepEqual(answers.slice(1, 1 + TEXTS.length), TEXTS);
});

/** `data` as one SSE data line inside other bytes, with where its JSON begins and ends. */
function asDataLine(data: string): { bytes: Buffer; from: number; to: number } {
  const before = Buffer.from('data: {"before":1}\n\ndata: ');
  const json = Buffer.from(data);
  return { bytes: Buffer.concat([before, json, Buffer.from('\n\ndata: [DONE]\n\n')]), from: before.length, to: before.length + json.length };
}

/** What one skimmer reads from each chunk's bytes (undefined: left to the parse), and what another reads from its text. */
function readFromBytesAndText(stream: string[]): { answers: (string | undefined)[]; fromText: (string | undefined)[] } {
  const bytesSkimmer = new TextChunkSkimmer();
  const textSkimmer = new TextChunkSkimmer();
  const answers = stream.map((data) => {
    const { bytes, from, to } = asDataLine(data);
    const read: string[] = [];
    const sink = { add: (t: string) => read.push(t), addBytes: (b: Buffer, start: number, end: number) => read.push(b.toString('utf8', start, end)) };
    return bytesSkimmer.readBytes(bytes, from, to, sink) ? read.join('') : undefined;
  });
  return { answers, fromText: stream.map((data) => textSkimmer.read(data)) };
}

test("a stream's skimmer reads from a chunk's bytes what it reads from its text", () => {
  const stream = [chunk([{ index: 0, delta: { role: 'assistant', content: '' } }]), ...TEXTS.map(text), text('and back'), chunk([])];
  const { answers, fromText } = readFromBytesAndText(stream);
  assert.deepEqual(answers, fromText);
  assert.deepEqual(answers.slice(1, -1), [...TEXTS, 'and back']);
});

test("a stream's skimmer reads from bytes what it reads from text, as the chunks around the text change", () => {
  const stream = streamOfChangingSurroundings();
  const { answers, fromText } = readFromBytesAndText(stream);
  assert.deepEqual(answers, fromText);
  assert.deepEqual(answers.slice(-9), [undefined, undefined, undefined, undefined, undefined, 'a new id', 'and back', undefined, undefined]);
});

test('the chat stream decoder reads the same events from text chunks on one data line as from chunks it parses', () => {
  const stream = [
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
    ...TEXTS.map(text),
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
    text('after the finish'),
    chunk([], { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
  ];
  const decode = (events: string[]) => {
    const decoder = new ChatStreamDecoder();
    return [...decoder.push(Buffer.from(`${events.join('')}data: [DONE]\n\n`)), ...decoder.end()];
  };
  // Two data lines an event: never read from bytes, always decoded and parsed.
  const split = (data: string) => `data: ${data.replace(',', ',\ndata: ')}\n\n`;
  const fromBytes = decode(stream.map((data) => `data: ${data}\n\n`));
  assert.deepEqual(fromBytes, decode(stream.map(split)));
  assert.deepEqual(
    fromBytes.filter((event) => event.type === 'text').map((event) => (event as { text: string }).text),
    TEXTS.filter((t) => t !== ''),
  );
});

test('a text chunk holding a raw control character is left to the parse, which refuses it, from text and from bytes', async () => {
  // JSON.stringify escapes it; an upstream that writes it raw writes a chunk JSON refuses
  const raw = text('tab\u0001bed').replace('\\u0001', '\u0001');
  assert.throws(() => JSON.parse(raw));
  assert.equal(plainTextDelta(raw), undefined);

  // A skimmer that knows the surroundings from a text chunk before steps aside as well
  const fromText = new TextChunkSkimmer();
  const fromBytes = new TextChunkSkimmer();
  const none = { add: () => assert.fail('nothing is read'), addBytes: () => assert.fail('nothing is read') };
  assert.equal(fromText.read(text('before')), 'before');
  const before = asDataLine(text('before'));
  assert.equal(fromBytes.readBytes(before.bytes, before.from, before.to, { add() {}, addBytes() {} }), true);
  assert.equal(fromText.read(raw), undefined);
  const { bytes, from, to } = asDataLine(raw);
  assert.equal(fromBytes.readBytes(bytes, from, to, none), false);

  // A whole stream with such a chunk is metered as parsing it would: the chunk's text is not counted
  const sse = [text('one'), raw, text(' two'), chunk([], { usage: null })].map((data) => `data: ${data}\n\n`).join('');
  const skimmed = await meteredAlike(sse, () => new ChatStreamMeter('o200k_base'));
  assert.equal(skimmed.output, 'one two');
});

// The chunks around the text: the role announced, the finish reason, a keep-alive with no choices.
const NOTHING_METERED = [
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
  chunk([{ index: 0, delta: { role: 'assistant' }, finish_reason: null }]),
  chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
  chunk([{ index: 0, delta: { content: null }, finish_reason: 'length' }]),
  chunk([]),
  JSON.stringify({ id: 'chatcmpl-2', choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null } }] }),
];

test('the role and finish chunks are taken as carrying nothing to meter, as parsing them finds', () => {
  for (const data of NOTHING_METERED) {
    assert.equal(carriesNothingMetered(data), true, data);
    assert.deepEqual(parsedReading(data), { text: '', other: false }, data);
  }
});

test('a chunk with text, usage, an error, tool calls or reasoning is never taken as carrying nothing', () => {
  const metered = [
    text('a'),
    text(' '),
    chunk([{ index: 0, delta: { content: 'last words' }, finish_reason: 'length' }]),
    chunk([], { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }], { error: { message: 'boom' } }),
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, finish_reason: null }]),
    chunk([{ index: 0, delta: { reasoning_content: 'r' }, finish_reason: null }]),
    // keys written with escapes, which JSON.parse reads as the keys themselves
    '{"choices":[],"\\u0075sage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}',
    '{"choices":[{"index":0,"delta":{"c\\u006fntent":"hidden"}}],"usage":null}',
    '{"choices":[{"index":0,"delta":{"content" : "spaced"}}]}',
    '[DONE]',
  ];
  for (const data of metered) {
    assert.equal(carriesNothingMetered(data), false, data);
    if (data !== '[DONE]') assert.notDeepEqual(parsedReading(data), { text: '', other: false }, data);
  }
});

test("a chat stream's meter skims the role and finish chunks from their bytes and meters the stream as parsing it would", async () => {
  const sse = [...NOTHING_METERED.slice(0, 1), text('one'), text(' two'), ...NOTHING_METERED.slice(2, 3)]
    .concat(chunk([], { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }))
    .map((data) => `data: ${data}\n\n`)
    .join('');
  const skimmed = await meteredAlike(`${sse}data: [DONE]\n\n`, () => new ChatStreamMeter('o200k_base'));
  assert.equal(skimmed.output, 'one two');
  assert.deepEqual(skimmed.skimmed, [NOTHING_METERED[0], text('one'), text(' two'), NOTHING_METERED[2]]);
});
