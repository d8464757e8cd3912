// A Messages request sent to an OpenAI chat upstream through the pivot: each fixture holds the
// client's request and either the whole body sent upstream (`expected`) or the field a 400 names (`refused`).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import { pivotRequestOfMessages } from '../../../src/formats/messages/to-pivot.js';
import type { MessagesRequest } from '../../../src/upstreams/anthropic/types.js';
import { chatRequestOf } from '../../../src/upstreams/openai-chat/to-upstream.js';

const chatRequestOfMessages = (request: MessagesRequest) => chatRequestOf(pivotRequestOfMessages(request, { upstreamModel: 'gpt-4o-mini' }));

async function fixture(name: string): Promise<{ request: MessagesRequest; expected?: unknown; refused?: string }> {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

async function translates(name: string) {
  const { request, expected } = await fixture(name);
  assert.ok(expected, `${name} holds an expected body`);
  assert.deepEqual(chatRequestOfMessages(request), expected);
}

function assertRefused(request: MessagesRequest, field: string) {
  assert.throws(
    () => chatRequestOfMessages(request),
    (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 400);
      assert.ok(error.message.startsWith(`${field}: `), error.message);
      return true;
    },
  );
}

async function refuses(name: string) {
  const { request, refused } = await fixture(name);
  assert.ok(refused, `${name} names the refused field`);
  assertRefused(request, refused);
}

test('a system string leads the messages; sampling, stop sequences and user id carry over; thinking becomes reasoning_effort; service_tier is dropped', () =>
  translates('request-system-string-and-sampling'));

test('top_k is refused with a 400 naming it: chat completions has none', () => refuses('request-top-k-refused'));

test('system blocks join with a blank line and cache_control is dropped', () => translates('request-system-blocks'));

test('base64 images become data URLs and URL images keep their URL', () => translates('request-images'));

test('PDF documents become file parts and text documents text parts', () => translates('request-documents'));

test('a document by URL is refused, naming the block', () => {
  const request: MessagesRequest = {
    model: 'claude-sonnet-4-5',
    max_tokens: 10,
    messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }],
  };
  assertRefused(request, 'messages[0].content[0].source');
});

test('custom tools become functions and disable_parallel_tool_use turns parallel calls off', () => translates('request-tools-auto-without-parallel-calls'));

test('a server tool is refused with a 400 naming it: a chat upstream has nothing to run it with', () => refuses('request-server-tool-refused'));

test('tool_choice any becomes required', () => translates('request-tool-choice-any'));

test('tool_choice for one tool names that function', () => translates('request-tool-choice-named-tool'));

test('tool_choice none becomes none', () => translates('request-tool-choice-none'));

test('tool_choice is left out when there are no tools', () => translates('request-tool-choice-without-tools'));

test("tool uses become tool_calls and tool results become tool messages ahead of the same turn's user content", () => translates('request-tool-round-trip'));

test('a tool result that answers no earlier tool use is refused, naming its tool_use_id', () => refuses('request-tool-result-without-its-call-refused'));

test('a streamed request asks the upstream for usage', () => translates('request-streaming'));
