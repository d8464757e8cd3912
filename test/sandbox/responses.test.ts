import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import OpenAI from 'openai';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { AUTH, addFault, clearSandbox, parseNamedSse, postChat, postJson, postTo, readUntilCut, streamNamed } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const url = () => `${sandbox.url}/v1/responses`;
const post = (body: unknown, headers: Record<string, string> = AUTH) => postTo(url(), body, headers);
const stream = (body: object) => streamNamed(url(), body, AUTH);
const client = () => new OpenAI({ apiKey: 'sk-test', baseURL: `${sandbox.url}/v1`, maxRetries: 0 });

const HELLO = { model: 'sandbox-chat', instructions: 'Be brief.', input: 'hello there' };
const usage = (input: number, output: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: input + output,
});
/** Everything of a response but its ids, which hash the request (and a streamed request says `stream: true`). */
const withoutIds = (response: any) => JSON.parse(JSON.stringify(response).replace(/(resp|msg|fc|call)_[0-9a-f]{24}/g, '$1_x'));
const streamedText = (events: any[]) => events.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('');

test('a plain call answers a whole Response echoing the user input, counted like chat', async () => {
  const { status, body } = await post(HELLO);
  assert.equal(status, 200);
  assert.match(body.id, /^resp_[0-9a-f]{24}$/);
  assert.deepEqual(body, {
    id: body.id,
    object: 'response',
    created_at: 1_735_689_600,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: 'Be brief.',
    max_output_tokens: null,
    model: 'sandbox-chat',
    output: [
      {
        type: 'message',
        id: body.id.replace('resp_', 'msg_'),
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Sandbox says: hello there', annotations: [] }],
      },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    // instructions are one message: (1 + 2) + (1 + 2), as chat counts a system message
    usage: usage(6, 4),
    user: null,
    metadata: {},
  });
});

test('a stream sends the typed events in order, numbered from 0, and completes with the plain answer', async () => {
  const { status, headers, events } = await stream(HELLO);
  assert.deepEqual([status, headers.get('content-type')], [200, 'text/event-stream']);
  assert.deepEqual(
    events.map((e) => [e.sequence_number, e.type]),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(4).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ].map((type, i) => [i, type]),
  );
  const { body: plain } = await post(HELLO);
  const [created, inProgress, added, partAdded] = events;
  assert.deepEqual(withoutIds(created.response), { ...withoutIds(plain), status: 'in_progress', output: [], usage: null });
  assert.deepEqual(inProgress.response, created.response);
  assert.deepEqual(withoutIds(added.item), { ...withoutIds(plain.output[0]), status: 'in_progress', content: [] });
  assert.deepEqual(partAdded.part, { type: 'output_text', text: '', annotations: [] });
  assert.deepEqual(
    events.slice(4, 8).map((e) => e.delta),
    ['Sandbox', ' says:', ' hello', ' there'],
  );
  assert.deepEqual(
    events.slice(8, 10).map((e) => [e.text, e.part]),
    [
      ['Sandbox says: hello there', undefined],
      [undefined, plain.output[0].content[0]],
    ],
  );
  assert.deepEqual(withoutIds(events[10].item), withoutIds(plain.output[0]));
  assert.deepEqual(withoutIds(events[11].response), withoutIds(plain));
});

test('the official SDK reads the stream and the plain answer alike', async () => {
  const [plain, streamed] = await Promise.all([client().responses.create(HELLO), client().responses.stream(HELLO).finalResponse()]);
  assert.deepEqual([streamed.output_text, streamed.usage], [plain.output_text, plain.usage]);
  assert.equal(plain.output_text, 'Sandbox says: hello there');
  const types: string[] = [];
  for await (const event of await client().responses.create({ ...HELLO, stream: true })) types.push(event.type);
  assert.equal(types.at(-1), 'response.completed');
});

test('an input of items costs what chat charges for the same conversation', async () => {
  const responses = {
    model: 'sandbox-chat',
    instructions: 'Be brief.',
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'weather in Paris' }] },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"query":"weather in Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '15 degrees' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is mild.' }] },
      { type: 'message', role: 'user', content: 'thanks [[words:3]]' },
    ],
  };
  const chat = {
    model: 'sandbox-chat',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'weather in Paris' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"query":"weather in Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '15 degrees' },
      { role: 'assistant', content: 'It is mild.' },
      { role: 'user', content: 'thanks [[words:3]]' },
    ],
  };
  const [plain, streamed, reference] = await Promise.all([post(responses), stream(responses), postChat(sandbox.url, chat)]);
  assert.deepEqual(reference.body.usage, { prompt_tokens: 3 + 4 + 4 + 3 + 4 + 3, completion_tokens: 3, total_tokens: 24 });
  assert.deepEqual([plain.body.output[0].content[0].text, plain.body.usage], ['w1 w2 w3', usage(21, 3)]);
  assert.deepEqual([streamedText(streamed.events), streamed.events.at(-1).response.usage], ['w1 w2 w3', usage(21, 3)]);
});

test('a reply longer than max_output_tokens is cut and the response is incomplete, streamed or not', async () => {
  const body = { model: 'sandbox-chat', input: '[[words:10]]', max_output_tokens: 4 };
  const plain = await post(body);
  assert.deepEqual(
    [plain.body.status, plain.body.incomplete_details, plain.body.output[0].status, plain.body.output[0].content[0].text, plain.body.usage],
    ['incomplete', { reason: 'max_output_tokens' }, 'incomplete', 'w1 w2 w3 w4', usage(2, 4)],
  );
  const { events } = await stream(body);
  assert.equal(streamedText(events), 'w1 w2 w3 w4');
  assert.equal(events.at(-1).type, 'response.incomplete');
  assert.deepEqual(withoutIds(events.at(-1).response), withoutIds(plain.body));
});

test('an offered function named in the prompt is called, its streamed argument pieces joining to the whole', async () => {
  const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }];
  const body = { model: 'sandbox-chat', input: 'weather in Paris [[tool:lookup]]', tools };
  const { body: plain } = await post(body);
  assert.deepEqual(
    [plain.output, plain.usage],
    [
      [
        {
          type: 'function_call',
          id: plain.id.replace('resp_', 'fc_'),
          call_id: plain.id.replace('resp_', 'call_'),
          name: 'lookup',
          arguments: '{"query":"weather in Paris"}',
          status: 'completed',
        },
      ],
      usage(5, 4),
    ],
  );
  const { events } = await stream(body);
  const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta);
  assert.equal(deltas.join(''), '{"query":"weather in Paris"}');
  assert.deepEqual(withoutIds(events.at(-1).response), withoutIds(plain));
  const rebuilt = await client()
    .responses.stream(body as any)
    .finalResponse();
  const { parsed_arguments: _parsed, ...call } = rebuilt.output[0] as any; // added by the SDK, not on the wire
  assert.deepEqual(withoutIds([call]), withoutIds(plain.output));
});

test('a call without a bearer token is refused with 401, one without model or input with 400', async () => {
  const noToken = await post(HELLO, { 'content-type': 'application/json' });
  assert.deepEqual([noToken.status, noToken.body.error.code], [401, 'invalid_api_key']);
  const { model: _m, ...noModel } = HELLO;
  const { input: _i, ...noInput } = HELLO;
  const answers = await Promise.all([noModel, noInput, { ...HELLO, input: [] }].map((body) => post(body)));
  assert.deepEqual(
    answers.map((a) => [a.status, a.body.error]),
    [
      [400, { message: 'model: required, a non-empty string', type: 'invalid_request_error', param: null, code: null }],
      [400, { message: 'input: required, a string or a non-empty array', type: 'invalid_request_error', param: null, code: null }],
      [400, { message: 'input: required, a string or a non-empty array', type: 'invalid_request_error', param: null, code: null }],
    ],
  );
});

test('a status fault on the responses kind answers in OpenAI error shape', async () => {
  await addFault(sandbox.url, { kind: 'responses', status: 503, times: 1 });
  const { status, body } = await post(HELLO);
  assert.deepEqual([status, body], [503, { error: { message: 'sandbox fault: status 503', type: 'server_error', param: null, code: null } }]);
  assert.equal((await post(HELLO)).status, 200);
});

test('drop_after_chunks sends that many events of a stream, then cuts the connection', async () => {
  await addFault(sandbox.url, { kind: 'responses', drop_after_chunks: 3 });
  const res = await postJson(url(), { ...HELLO, stream: true });
  const { text, cut } = await readUntilCut(res);
  assert.equal(cut, true);
  assert.deepEqual(
    parseNamedSse(text).map((e) => e.type),
    ['response.created', 'response.in_progress', 'response.output_item.added'],
  );
});

test('under /noresponses the responses API answers 404 while chat completions are served', async () => {
  const missing = await postTo(`${sandbox.url}/noresponses/v1/responses`, HELLO, AUTH);
  assert.deepEqual(
    [missing.status, missing.body],
    [404, { error: { message: 'Invalid URL (POST /v1/responses)', type: 'invalid_request_error', param: null, code: 'not_found' } }],
  );
  const chat = await postTo(`${sandbox.url}/noresponses/v1/chat/completions`, { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] }, AUTH);
  assert.equal(chat.status, 200);
  const viaSdk = new OpenAI({ apiKey: 'sk-test', baseURL: `${sandbox.url}/noresponses/v1`, maxRetries: 0 });
  await assert.rejects(viaSdk.responses.create(HELLO), { status: 404 });
});
