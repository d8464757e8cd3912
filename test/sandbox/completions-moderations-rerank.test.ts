// The sandbox's legacy completions (plain, streamed, Azure's path), moderations and rerank, called
// with plain fetch: answers that are pure functions of the request, and faults applied as to chat.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { AUTH, addFault, clearSandbox, parseSse, postJson, postTo } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterEach(() => clearSandbox(sandbox.url));
after(() => sandbox.close());

const completions = (body: unknown, headers: Record<string, string> = AUTH) => postTo(`${sandbox.url}/v1/completions`, body, headers);
const streamed = async (body: object) => {
  const res = await postJson(`${sandbox.url}/v1/completions`, { ...body, stream: true });
  return parseSse(await res.text());
};
const moderate = (body: unknown) => postTo(`${sandbox.url}/v1/moderations`, body, AUTH);
const rerank = (body: unknown) => postTo(`${sandbox.url}/v1/rerank`, body, AUTH);

test('a completion answers text_completion with the prompt’s reply and its word counts as usage', async () => {
  const { status, body } = await completions({ model: 'm', prompt: 'toll roads at dawn', max_tokens: 4 });
  assert.equal(status, 200);
  assert.deepEqual(
    { object: body.object, model: body.model, choices: body.choices, usage: body.usage },
    {
      object: 'text_completion',
      model: 'm',
      choices: [{ text: 'Sandbox says: toll roads', index: 0, logprobs: null, finish_reason: 'length' }],
      usage: { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 },
    },
  );
});

test('echo puts the prompt before the reply, and stop ends the reply before its word', async () => {
  const { body } = await completions({ model: 'm', prompt: 'a b c', echo: true, stop: 'b' });
  assert.deepEqual(
    body.choices.map((c: any) => [c.text, c.finish_reason]),
    [['a b c Sandbox says: a', 'stop']],
  );
});

test('a stream sends one chunk a word, a last chunk with the finish reason, the usage chunk when asked for, then [DONE]', async () => {
  const events = await streamed({ model: 'm', prompt: 'one two', stream_options: { include_usage: true } });
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1);
  assert.deepEqual(chunks.map((c) => c.choices[0]?.text ?? null).join(''), 'Sandbox says: one two');
  assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
  assert.deepEqual(chunks.at(-1).choices, []);
  assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 });
  assert.ok(chunks.slice(0, -1).every((c) => c.usage === null && c.object === 'text_completion'));
});

test('a stream without include_usage carries no usage at all', async () => {
  const events = await streamed({ model: 'm', prompt: 'one two' });
  assert.ok(events.slice(0, -1).every((c) => !('usage' in c) && c.choices.length === 1));
});

test('an error_after_chunks fault ends a completion stream with OpenAI’s error object and no [DONE]', async () => {
  await addFault(sandbox.url, { kind: 'completions', error_after_chunks: 2 });
  const events = await streamed({ model: 'm', prompt: '[[words:10]]' });
  assert.equal(events.length, 3);
  assert.deepEqual(events.at(-1), { error: { message: 'sandbox fault: error after 2 chunks', type: 'server_error', param: null, code: null } });
});

test('Azure’s deployment path answers completions under the deployment’s name, with api-key', async () => {
  const url = `${sandbox.url}/openai/deployments/my-dep/completions?api-version=2024-10-21`;
  const { status, body } = await postTo(url, { prompt: 'hi' }, { 'api-key': 'k', 'content-type': 'application/json' });
  assert.equal(status, 200);
  assert.equal(body.model, 'my-dep');
});

test('a prompt of no known form is a 400 naming prompt', async () => {
  const { status, body } = await completions({ model: 'm', prompt: [1, 'a'] });
  assert.equal(status, 400);
  assert.match(body.error.message, /^prompt:/);
});

test('a moderation flags the categories whose marker words its text holds, the same scores every time', async () => {
  const first = await moderate({ model: 'omni', input: ['we will kill the lights', 'a calm day'] });
  const again = await moderate({ model: 'omni', input: ['we will kill the lights', 'a calm day'] });
  assert.equal(first.status, 200);
  assert.deepEqual(again.body.results, first.body.results);
  const [violent, calm] = first.body.results;
  assert.deepEqual([violent.flagged, violent.categories.violence, violent.categories.hate, calm.flagged], [true, true, false, false]);
  assert.equal(Object.keys(violent.category_scores).length, 13);
  assert.ok(violent.category_scores.violence >= 0.9 && calm.category_scores.violence < 0.01);
});

test('a status fault answers a moderation with that status', async () => {
  await addFault(sandbox.url, { kind: 'moderations', status: 503 });
  assert.equal((await moderate({ model: 'omni', input: 'hi' })).status, 503);
});

test('a rerank sorts by the share of query words each document holds, ties in document order, top_n at most', async () => {
  const { status, body } = await rerank({
    model: 'r',
    query: 'Gate toll',
    documents: ['a gate', 'the toll gate!', { text: 'nothing' }, 'another gate'],
    top_n: 3,
  });
  assert.equal(status, 200);
  assert.deepEqual(
    body.results.map((r: any) => [r.index, r.relevance_score, r.document.text]),
    [
      [1, 1, 'the toll gate!'],
      [0, 0.5, 'a gate'],
      [3, 0.5, 'another gate'],
    ],
  );
  assert.deepEqual(body.usage, { total_tokens: 2 + 2 + 3 + 1 + 2 });
});

test('a rerank with return_documents false answers indexes and scores alone', async () => {
  const { body } = await rerank({ model: 'r', query: 'gate', documents: ['gate'], return_documents: false });
  assert.deepEqual(body.results, [{ index: 0, relevance_score: 1 }]);
});

test('a rerank whose document is neither a string nor has a text is a 400 naming it', async () => {
  const { status, body } = await rerank({ model: 'r', query: 'q', documents: ['a', { title: 'b' }] });
  assert.equal(status, 400);
  assert.match(body.error.message, /^documents\[1\]/);
});
