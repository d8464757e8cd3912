import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { pivotRequestOf } from '../../../src/formats/gemini/to-pivot.js';

const options = { upstreamModel: 'upstream-model', stream: false };

async function fixture(name: string) {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

/** The 400 message `pivotRequestOf` throws for `body`. */
function refusal(body: Record<string, unknown>): string {
  try {
    pivotRequestOf({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], ...body } as never, options);
  } catch (error) {
    assert.equal((error as { status?: number }).status, 400);
    return (error as Error).message;
  }
  assert.fail('the request was not refused');
}

test('a text request with a system instruction and generation settings keeps them all', async () => {
  const { body, expected } = await fixture('request-text');
  assert.deepEqual(pivotRequestOf(body, options), expected);
});

test('a function call without an id and the functionResponse that answers it by name share the id call_0', async () => {
  const { body, expected } = await fixture('request-function-round-trip');
  assert.deepEqual(pivotRequestOf(body, { ...options, stream: true }), expected);
});

test('two calls of one function are answered in order, each response taking its call’s id', () => {
  const call = { functionCall: { name: 'f', args: {} } };
  const answer = (n: number) => ({ functionResponse: { name: 'f', response: { n } } });
  const contents = [
    { role: 'user', parts: [{ text: 'go' }] },
    { role: 'model', parts: [call, call] },
    { role: 'user', parts: [answer(1), answer(2)] },
  ];
  const tools = pivotRequestOf({ contents }, options).messages.filter((message) => message.role === 'tool');
  assert.deepEqual(
    tools.map((message) => [message.toolCallId, message.content]),
    [
      ['call_0', [{ type: 'text', text: '{"n":1}' }]],
      ['call_1', [{ type: 'text', text: '{"n":2}' }]],
    ],
  );
});

test('a functionResponse with an id answers the call of that id', () => {
  const contents = [
    { role: 'model', parts: [{ functionCall: { id: 'a', name: 'f', args: {} } }, { functionCall: { id: 'b', name: 'f', args: {} } }] },
    { role: 'user', parts: [{ functionResponse: { id: 'b', name: 'f', response: {} } }] },
  ];
  assert.deepEqual(pivotRequestOf({ contents }, options).messages[1], { role: 'tool', toolCallId: 'b', name: 'f', content: [{ type: 'text', text: '{}' }] });
});

test('responseMimeType application/json without a schema is the json_object format', () => {
  const request = pivotRequestOf({ contents: [], generationConfig: { responseMimeType: 'application/json' } }, options);
  assert.deepEqual(request.responseFormat, { type: 'json_object' });
});

test('a responseJsonSchema is carried as it is', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } } };
  const request = pivotRequestOf({ contents: [], generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } }, options);
  assert.deepEqual(request.responseFormat, { type: 'json_schema', name: 'response', schema });
});

test('function calling mode NONE is the none tool choice', () => {
  const request = pivotRequestOf({ contents: [], toolConfig: { functionCallingConfig: { mode: 'NONE' } } }, options);
  assert.equal(request.toolChoice, 'none');
});

test('Google’s own tools are refused, naming the tool', () => {
  assert.match(refusal({ tools: [{ functionDeclarations: [{ name: 'f' }] }, { googleSearch: {} }] }), /^tools\[1\]\.googleSearch: /);
  assert.match(refusal({ tools: [{ codeExecution: {} }] }), /^tools\[0\]\.codeExecution: /);
});

test('more than one candidate is refused', () => {
  assert.match(refusal({ generationConfig: { candidateCount: 2 } }), /^generationConfig\.candidateCount: /);
});

test('safety settings are refused: another upstream does not run Gemini’s filters', () => {
  assert.match(refusal({ safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] }), /^safetySettings: /);
});

test('cached content is refused: another upstream does not hold Gemini’s cache', () => {
  assert.match(refusal({ cachedContent: 'cachedContents/abc' }), /^cachedContent: /);
});

test('a functionResponse for no earlier call is refused, naming the part', () => {
  const contents = [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }];
  assert.match(refusal({ contents }), /^contents\[0\]\.parts\[0\]\.functionResponse\.name: .*"f"/);
});

test('a PDF by URL is refused, naming the fileData part', () => {
  const contents = [{ role: 'user', parts: [{ fileData: { mimeType: 'application/pdf', fileUri: 'gs://bucket/a.pdf' } }] }];
  assert.match(refusal({ contents }), /^contents\[0\]\.parts\[0\]\.fileData: /);
});

test('executable code parts are refused, naming the kind', () => {
  const contents = [{ role: 'model', parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }] }];
  assert.match(refusal({ contents }), /^contents\[0\]\.parts\[0\]\.executableCode: /);
});

test('settings that change the answer and have no equivalent are refused, each naming its field', () => {
  const refused: [Record<string, unknown>, RegExp][] = [
    [{ generationConfig: { seed: 7 } }, /^generationConfig\.seed: /],
    [{ generationConfig: { presencePenalty: 0.5 } }, /^generationConfig\.presencePenalty: /],
    [{ generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } }, /^generationConfig\.responseModalities: /],
    [{ generationConfig: { responseMimeType: 'text/x.enum' } }, /^generationConfig\.responseMimeType: /],
    [{ toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } } }, /^toolConfig\.functionCallingConfig\.mode: /],
  ];
  for (const [body, message] of refused) assert.match(refusal(body), message);
});
