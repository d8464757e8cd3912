// converseRequestOf on fixtures: `pivot` in, the Converse body `expected` out (AWS's documented examples where
// there is one); refusals checked one by one.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import type { PivotMessage, PivotRequest } from '../../../src/pivot/types.js';
import { converseRequestOf } from '../../../src/upstreams/bedrock/to-upstream.js';

async function fixture(name: string): Promise<{ pivot: PivotRequest; expected: unknown }> {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
}

const ask = (text: string): PivotMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const request = (overrides: Partial<PivotRequest> = {}): PivotRequest => ({ model: 'm', system: [], messages: [ask('hi')], stream: false, ...overrides });
const TOOLS = [{ name: 'lookup' }];
const CALLED: PivotMessage[] = [
  ask('look it up'),
  { role: 'assistant', content: [], toolCalls: [{ id: 'tooluse_1', name: 'lookup', arguments: '{}' }] },
  { role: 'tool', toolCallId: 'tooluse_1', name: 'lookup', content: [{ type: 'text', text: 'found' }] },
];

/** The refusal a converter throws: a 400 whose message starts with the field at fault. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 400);
    return error.message;
  }
  assert.fail('expected a refusal');
}

test("AWS's top_song conversation becomes its documented Converse body, the JSON tool result as json", async () => {
  const { pivot, expected } = await fixture('request-tool-round-trip.json');
  assert.deepEqual(converseRequestOf(pivot), expected);
});

test('images and a PDF go inline, and consecutive turns of one role merge so the roles alternate', async () => {
  const { pivot, expected } = await fixture('request-media-and-merged-turns.json');
  assert.deepEqual(converseRequestOf(pivot), expected);
});

test('signed reasoning goes back, top_k and the thinking budget go as additional model fields, a schema as outputConfig', async () => {
  const { pivot, expected } = await fixture('request-reasoning-top-k-schema.json');
  assert.deepEqual(converseRequestOf(pivot), expected);
});

test('an image by URL is refused: Bedrock takes images inline', () => {
  const messages: PivotMessage[] = [{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } }] }];
  assert.equal(
    refusal(() => converseRequestOf(request({ messages }))),
    'messages[0].content[0].image_url: Bedrock takes images inline: send base64',
  );
});

test('a JSON mode without a schema is refused', () => {
  assert.match(
    refusal(() => converseRequestOf(request({ responseFormat: { type: 'json_object' } }))),
    /^response_format: .*JSON schema/,
  );
});

test('tool choice none leaves the tools out, so the model can call none', () => {
  assert.deepEqual(converseRequestOf(request({ tools: TOOLS, toolChoice: 'none' })), { messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
});

test('tool choice none is refused in a conversation that holds tool calls, where Converse needs the tools', () => {
  assert.match(
    refusal(() => converseRequestOf(request({ messages: CALLED, tools: TOOLS, toolChoice: 'none' }))),
    /^tool_choice: /,
  );
});

test('tool choice auto is sent as auto', () => {
  assert.deepEqual(converseRequestOf(request({ tools: TOOLS, toolChoice: 'auto' })).toolConfig?.toolChoice, { auto: {} });
});

test('asking for one tool call at a time is refused: Converse cannot say it', () => {
  assert.match(
    refusal(() => converseRequestOf(request({ tools: TOOLS, parallelToolCalls: false }))),
    /^parallel_tool_calls: /,
  );
});

test('a thinking budget not under max_tokens is refused', () => {
  assert.match(
    refusal(() => converseRequestOf(request({ maxTokens: 1000, reasoning: { budgetTokens: 1000 } }))),
    /^max_tokens: must exceed/,
  );
});

test('tool call arguments that are not a JSON object are refused', () => {
  const messages: PivotMessage[] = [ask('go'), { role: 'assistant', content: [], toolCalls: [{ id: 't', name: 'lookup', arguments: '[1]' }] }];
  assert.match(
    refusal(() => converseRequestOf(request({ messages, tools: TOOLS }))),
    /^tool_calls: /,
  );
});

test('an image of a type Bedrock does not read is refused', () => {
  const messages: PivotMessage[] = [{ role: 'user', content: [{ type: 'image', source: { kind: 'base64', mediaType: 'image/bmp', data: 'Qk0=' } }] }];
  assert.match(
    refusal(() => converseRequestOf(request({ messages }))),
    /^messages\[0\]\.content\[0\]\.image: image\/bmp/,
  );
});

test('a file that is not a PDF is refused', () => {
  const messages: PivotMessage[] = [{ role: 'user', content: [{ type: 'file', mediaType: 'text/csv', data: 'YSxi' }] }];
  assert.match(
    refusal(() => converseRequestOf(request({ messages }))),
    /^messages\[0\]\.content\[0\]\.file: text\/csv/,
  );
});

test('a PDF without a name gets a neutral one, numbered', () => {
  const messages: PivotMessage[] = [{ role: 'user', content: [{ type: 'file', mediaType: 'application/pdf', data: 'JVBE' }] }];
  assert.deepEqual(converseRequestOf(request({ messages })).messages[0]?.content, [
    { document: { format: 'pdf', name: 'document-1', source: { bytes: 'JVBE' } } },
  ]);
});
