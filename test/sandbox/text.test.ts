import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastUserText, messageTokens, planReply, promptTokens, wordPieces } from '../../src/sandbox/text.js';

test('a message costs one token plus the words of its text', () => {
  assert.equal(messageTokens({ role: 'user', content: '  hello   big world ' }), 4);
  assert.equal(messageTokens({ role: 'assistant', content: null }), 1);
});

test('only the text parts of an array content are counted', () => {
  const content = [
    { type: 'text', text: 'look at' },
    { type: 'image_url', image_url: { url: 'https://example.com/a b.png' } },
    { type: 'text', text: 'this' },
  ];
  assert.equal(messageTokens({ role: 'user', content }), 4);
});

test('tool call arguments and tool results count their words', () => {
  const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"query":"a b"}' } }] };
  const result = { role: 'tool', tool_call_id: 'c', content: 'two words' };
  assert.equal(promptTokens([call, result]), 1 + 2 + 1 + 2);
});

test('the last user message is the one answered, whatever follows it', () => {
  const messages = [
    { role: 'user', content: 'first' },
    { role: 'user', content: 'second' },
    { role: 'assistant', content: 'x' },
  ];
  assert.equal(lastUserText(messages), 'second');
  assert.equal(lastUserText([{ role: 'system', content: 'only system' }]), '');
});

test('a plain prompt is echoed after "Sandbox says:"', () => {
  assert.deepEqual(planReply({ userText: 'hi  there' }), {
    type: 'text',
    words: ['Sandbox', 'says:', 'hi', 'there'],
    truncated: false,
    stopSequence: null,
    outputTokens: 4,
  });
});

test('a words directive asks for exactly N numbered words, cut by the token limit', () => {
  assert.deepEqual(planReply({ userText: 'go [[words:3]]' }), {
    type: 'text',
    words: ['w1', 'w2', 'w3'],
    truncated: false,
    stopSequence: null,
    outputTokens: 3,
  });
  assert.deepEqual(planReply({ userText: 'go [[words:3]]', maxTokens: 2 }), {
    type: 'text',
    words: ['w1', 'w2'],
    truncated: true,
    stopSequence: null,
    outputTokens: 2,
  });
  assert.deepEqual(planReply({ userText: 'go [[words:3]]', maxTokens: 3 }), {
    type: 'text',
    words: ['w1', 'w2', 'w3'],
    truncated: false,
    stopSequence: null,
    outputTokens: 3,
  });
});

test('a reply ends before the first word equal to a stop sequence, unless the token limit comes first', () => {
  assert.deepEqual(planReply({ userText: '[[words:5]]', stopSequences: ['nope', 'w4', 'w2'] }), {
    type: 'text',
    words: ['w1'],
    truncated: false,
    stopSequence: 'w2',
    outputTokens: 1,
  });
  assert.deepEqual(planReply({ userText: '[[words:5]]', stopSequences: ['w4'], maxTokens: 3 }), {
    type: 'text',
    words: ['w1', 'w2', 'w3'],
    truncated: false,
    stopSequence: 'w4',
    outputTokens: 3,
  });
  assert.deepEqual(planReply({ userText: '[[words:5]]', stopSequences: ['w4'], maxTokens: 2 }), {
    type: 'text',
    words: ['w1', 'w2'],
    truncated: true,
    stopSequence: null,
    outputTokens: 2,
  });
  assert.deepEqual(planReply({ userText: 'a b', stopSequences: ['a b'] }), {
    type: 'text',
    words: ['Sandbox', 'says:', 'a', 'b'],
    truncated: false,
    stopSequence: null,
    outputTokens: 4,
  });
});

test('a tool directive calls an offered tool with the other words as the query', () => {
  assert.deepEqual(planReply({ userText: 'weather in [[tool:lookup]] Paris', toolNames: ['lookup'] }), {
    type: 'tool',
    name: 'lookup',
    arguments: '{"query":"weather in Paris"}',
    outputTokens: 4,
  });
});

test('a tool directive naming a tool not offered is only echoed', () => {
  assert.deepEqual(planReply({ userText: 'x [[tool:lookup]]', toolNames: ['other'] }), {
    type: 'text',
    words: ['Sandbox', 'says:', 'x', '[[tool:lookup]]'],
    truncated: false,
    stopSequence: null,
    outputTokens: 4,
  });
});

test('word pieces concatenate back to the original string', () => {
  const args = '{"query":"weather in Paris"}';
  assert.deepEqual(wordPieces(args), ['{"query":"weather', ' in', ' Paris"}']);
  assert.equal(wordPieces(args).join(''), args);
});
