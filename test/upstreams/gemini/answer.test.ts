// Gemini generateContent answers read into the pivot: each fixture holds an answer shaped on the
// examples of Gemini's generateContent reference and the pivot answer it must give.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { finishOf, pivotResponseOf, pivotUsageOf, readPart } from '../../../src/upstreams/gemini/from-upstream.js';

async function reads(name: string) {
  const { upstream, expected } = JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
  assert.deepEqual(pivotResponseOf(upstream), expected);
}

test('a text answer keeps its text, its id and its usage, and stops', () => reads('response-text'));

test('function calls become tool calls (call_<n> where Gemini gave no id) and the turn finishes with tool_calls', () => reads('response-function-call'));

test('a thought is reasoning, and cached and thought tokens are counted as cache reads and reasoning within input and output', () =>
  reads('response-cached-thoughts'));

test('a prompt blocked before any candidate is a refusal with the prompt still billed', () => reads('response-prompt-blocked'));

test('an answer cut by maxOutputTokens keeps its text and finishes with length', () => reads('response-max-tokens'));

test('an answer stopped by the safety filter is a refusal without text', () => reads('response-safety'));

test('the content filters other than SAFETY are refusals too, and an unknown reason is a stop', () => {
  const reasons = ['RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'OTHER', 'FINISH_REASON_UNSPECIFIED'];
  assert.deepEqual(
    reasons.map((reason) => finishOf(reason, false)),
    ['refusal', 'refusal', 'refusal', 'refusal', 'refusal', 'stop', 'stop'],
  );
});

test('a turn cut by the token limit is length even when it called a tool', () => {
  assert.deepEqual([finishOf('MAX_TOKENS', true), finishOf('STOP', true)], ['length', 'tool_calls']);
});

test('usage without cached or thought tokens leaves those counts out rather than saying zero', () => {
  assert.deepEqual(pivotUsageOf({ promptTokenCount: 5, candidatesTokenCount: 3, cachedContentTokenCount: 0, thoughtsTokenCount: 0 }), {
    input: 5,
    output: 3,
  });
});

test('a signature on a text part is read as reasoning without text, before the text', () => {
  assert.deepEqual(readPart({ text: 'Done.', thoughtSignature: 'sig-1' }), [
    { type: 'reasoning', text: '', signature: 'sig-1' },
    { type: 'text', text: 'Done.' },
  ]);
});

test('a signed thought is one reading of reasoning carrying its signature', () => {
  assert.deepEqual(readPart({ text: 'Let me think.', thought: true, thoughtSignature: 'sig-2' }), [
    { type: 'reasoning', text: 'Let me think.', signature: 'sig-2' },
  ]);
});

test('a function call without args has an empty object as its arguments', () => {
  assert.deepEqual(readPart({ functionCall: { name: 'now' } }), [{ type: 'tool_call', name: 'now', arguments: '{}' }]);
});
