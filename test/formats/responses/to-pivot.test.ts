import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { pivotRequestOf } from '../../../src/formats/responses/to-pivot.js';
import type { ResponsesRequest } from '../../../src/formats/responses/types.js';

const options = { upstreamModel: 'upstream-model' };

async function fixture(name: string) {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

/** The 400 message `pivotRequestOf` throws for `body`. */
function refusal(body: Record<string, unknown>): string {
  try {
    pivotRequestOf({ model: 'm', input: 'hi', ...body } as ResponsesRequest, options);
  } catch (error) {
    assert.equal((error as { status?: number }).status, 400);
    return (error as Error).message;
  }
  assert.fail('the request was not refused');
}

test('a text input with instructions and sampling settings becomes a system prompt and one user message', async () => {
  const { body, expected } = await fixture('request-text');
  assert.deepEqual(pivotRequestOf(body, options), expected);
});

test('images by URL and as data URLs, and a PDF as file_data, become image and file parts', async () => {
  const { body, expected } = await fixture('request-image-and-file');
  assert.deepEqual(pivotRequestOf(body, options), expected);
});

test('a reasoning item, a message and function calls sent back make one assistant turn, their outputs tool messages', async () => {
  const { body, expected } = await fixture('request-function-round-trip');
  assert.deepEqual(pivotRequestOf(body, options), expected);
});

test('a function call after a tool result opens a new assistant turn', () => {
  const input = [
    { type: 'function_call', call_id: 'a', name: 'f', arguments: '{}' },
    { type: 'function_call_output', call_id: 'a', output: 'one' },
    { type: 'function_call', call_id: 'b', name: 'f', arguments: '{}' },
  ];
  const { messages } = pivotRequestOf({ model: 'm', input }, options);
  assert.deepEqual(
    messages.map((message) => message.role),
    ['assistant', 'tool', 'assistant'],
  );
});

test('a named function tool_choice becomes the pivot’s named choice', () => {
  const request = pivotRequestOf({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'f' } }, options);
  assert.deepEqual([request.tools, request.toolChoice], [[{ name: 'f' }], { name: 'f' }]);
});

test('a json_object text format becomes the json_object response format', () => {
  assert.deepEqual(pivotRequestOf({ model: 'm', input: 'hi', text: { format: { type: 'json_object' } } }, options).responseFormat, { type: 'json_object' });
});

test('efforts beyond the pivot’s scale are carried as its nearest end', () => {
  const effortOf = (effort: string) => pivotRequestOf({ model: 'm', input: 'hi', reasoning: { effort } }, options).reasoning;
  assert.deepEqual([effortOf('none'), effortOf('xhigh')], [{ effort: 'minimal' }, { effort: 'high' }]);
});

test('safety_identifier is carried as the end user when user is absent', () => {
  assert.equal(pivotRequestOf({ model: 'm', input: 'hi', safety_identifier: 'hashed-user' }, options).user, 'hashed-user');
});

test('bookkeeping fields (store, metadata, service_tier, cache hints, truncation) change nothing in the pivot', () => {
  const bookkeeping = {
    store: true,
    metadata: { a: 'b' },
    service_tier: 'flex',
    prompt_cache_key: 'k',
    prompt_cache_retention: '24h',
    stream_options: { include_obfuscation: false },
    truncation: 'auto',
    max_tool_calls: 3,
    include: ['reasoning.encrypted_content'],
  };
  assert.deepEqual(pivotRequestOf({ model: 'm', input: 'hi', ...bookkeeping }, options), pivotRequestOf({ model: 'm', input: 'hi' }, options));
});

test('previous_response_id is refused: a translated call has no stored response to continue', () => {
  assert.match(refusal({ previous_response_id: 'resp_1' }), /^previous_response_id: /);
});

test('a conversation is refused, naming the field', () => {
  assert.match(refusal({ conversation: 'conv_1' }), /^conversation: /);
});

test('a hosted tool is refused, naming its place in tools', () => {
  const tools = [
    { type: 'function', name: 'f' },
    { type: 'web_search', search_context_size: 'low' },
  ];
  assert.match(refusal({ tools }), /^tools\[1\]\.type: "web_search" tools run at OpenAI only/);
});

test('a hosted tool_choice is refused', () => {
  assert.match(refusal({ tool_choice: { type: 'file_search' } }), /^tool_choice: /);
});

test('an image by file_id is refused, naming the part', () => {
  const input = [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1', detail: 'auto' }] }];
  assert.match(refusal({ input }), /^input\[0\]\.content\[0\]\.file_id: /);
});

test('a file by URL is refused, naming file_url', () => {
  const input = [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }];
  assert.match(refusal({ input }), /^input\[0\]\.content\[0\]\.file_url: /);
});

test('a file by file_id is refused, naming file_id', () => {
  const input = [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }];
  assert.match(refusal({ input }), /^input\[0\]\.content\[0\]\.file_id: /);
});

test('a function_call_output for no earlier call is refused, naming its call_id', () => {
  assert.match(refusal({ input: [{ type: 'function_call_output', call_id: 'call_x', output: '1' }] }), /^input\[0\]\.call_id: .*"call_x"/);
});

test('an item_reference is refused: it names a stored item', () => {
  assert.match(refusal({ input: [{ type: 'item_reference', id: 'msg_1' }] }), /^input\[0\]\.type: /);
});

test('a hosted tool call item in the input is refused, naming its type', () => {
  assert.match(refusal({ input: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }] }), /^input\[0\]\.type: "web_search_call"/);
});

test('settings that change the answer and have no equivalent are refused, each naming its field', () => {
  const refused: [Record<string, unknown>, RegExp][] = [
    [{ text: { verbosity: 'low' } }, /^text\.verbosity: /],
    [{ top_logprobs: 5 }, /^top_logprobs: /],
    [{ include: ['reasoning.encrypted_content', 'message.output_text.logprobs'] }, /^include\[1\]: /],
    [{ background: true }, /^background: /],
    [{ prompt: { id: 'pmpt_1' } }, /^prompt: /],
    [{ reasoning: { effort: 'high', mode: 'pro' } }, /^reasoning\.mode: /],
    [{ tools: [{ type: 'function', name: 'f', defer_loading: true }] }, /^tools\[0\]\.defer_loading: /],
  ];
  for (const [body, message] of refused) assert.match(refusal(body), message);
});
