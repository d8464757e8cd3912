// A Messages request as a chat request: each fixture holds the client's request and the whole body sent upstream.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import type { MessagesRequest } from '../../../src/upstreams/anthropic/types.js';
import { messagesToChatRequest } from '../../../src/upstreams/openai-chat/from-messages.js';

const opts = { upstreamModel: 'gpt-4o-mini' };

async function translates(name: string) {
  const file = new URL(`./fixtures/${name}.json`, import.meta.url);
  const { request, expected } = JSON.parse(await readFile(file, 'utf8'));
  assert.deepEqual(messagesToChatRequest(request, opts), expected);
}

test('a system string leads the messages; sampling, stop sequences and user id carry over; top_k and unknown fields are dropped', () =>
  translates('request-system-string-and-sampling'));

test('system blocks join with a blank line and cache_control is dropped', () => translates('request-system-blocks'));

test('base64 images become data URLs and URL images keep their URL', () => translates('request-images'));

test('PDF documents become file parts and text documents text parts', () => translates('request-documents'));

test('a document by URL is refused, naming the block', () => {
  const request: MessagesRequest = {
    model: 'claude-sonnet-4-5',
    max_tokens: 10,
    messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }],
  };
  assert.throws(
    () => messagesToChatRequest(request, opts),
    (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 400);
      assert.match(error.message, /^messages\[0\]\.content\[0\]\.source: /);
      return true;
    },
  );
});

test('custom tools become functions, server tools are dropped, and disable_parallel_tool_use turns parallel calls off', () =>
  translates('request-tools-auto-without-parallel-calls'));

test('tool_choice any becomes required', () => translates('request-tool-choice-any'));

test('tool_choice for one tool names that function', () => translates('request-tool-choice-named-tool'));

test('tool_choice none becomes none', () => translates('request-tool-choice-none'));

test('tool_choice is left out when no tool survives translation', () => translates('request-tool-choice-without-tools'));

test("tool uses become tool_calls and tool results become tool messages ahead of the same turn's user content", () => translates('request-tool-round-trip'));

test('a streamed request asks the upstream for usage', () => translates('request-streaming'));
