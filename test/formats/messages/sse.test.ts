// Messages stream events framed as SSE, as a Messages client reads them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatSse } from '../../../src/formats/messages/sse.js';

test('an event is framed with its type as the SSE event name', () => {
  const frames = [{ type: 'ping' }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a\nb' } }] as const;
  assert.equal(
    frames.map((event) => formatSse(event)).join(''),
    'event: ping\ndata: {"type":"ping"}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\nb"}}\n\n',
  );
});

test('a text delta is framed with the very bytes JSON.stringify gives the whole event, whatever its text', () => {
  const texts = ['', 'plain', 'quote " and backslash \\', 'line\nbreak\ttab\r', 'control \u0001\u001f', 'é 中文 🚀', 'lone \ud800 surrogate', '</script>'];
  for (const [index, text] of texts.entries()) {
    const event = { type: 'content_block_delta', index, delta: { type: 'text_delta', text } } as const;
    assert.equal(formatSse(event), `event: content_block_delta\ndata: ${JSON.stringify(event)}\n\n`, JSON.stringify(text));
  }
});
