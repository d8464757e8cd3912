// Prompt texts repeat from call to call (a system prompt, a conversation's history): their counts are
// remembered, within a bound on the characters kept, and are always what the tokenizer says.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countPromptTokens, countTokens, PromptCountCache } from '../../src/billing/tokens.js';

/** A stand-in tokenizer that counts characters and records every text it was asked to count. */
function countingEncoder() {
  const asked: string[] = [];
  const count = (text: string) => {
    asked.push(text);
    return text.length;
  };
  return { asked, count };
}

describe('prompt token counts', () => {
  test('a text counted twice is encoded once and counts the same both times', () => {
    const cache = new PromptCountCache(1_000);
    const encoder = countingEncoder();
    assert.equal(cache.count('you are a helpful assistant', encoder.count), 27);
    assert.equal(cache.count('you are a helpful assistant', encoder.count), 27);
    assert.deepEqual(encoder.asked, ['you are a helpful assistant']);
  });

  test('past its bound on characters kept, the oldest texts are forgotten first', () => {
    const cache = new PromptCountCache(100);
    const encoder = countingEncoder();
    const texts = Array.from({ length: 11 }, (_, i) => String(i).padStart(10, '-')); // 10 characters each
    for (const text of texts) cache.count(text, encoder.count);
    assert.equal(cache.size, 10, '110 characters asked for, 100 kept at most');
    cache.count(texts[10]!, encoder.count);
    cache.count(texts[1]!, encoder.count);
    assert.equal(encoder.asked.length, 11, 'the newer texts are still known');
    cache.count(texts[0]!, encoder.count);
    assert.equal(encoder.asked.length, 12, 'the oldest was encoded again');
  });

  test('a text longer than a tenth of the bound is counted each time and never kept', () => {
    const cache = new PromptCountCache(100);
    const encoder = countingEncoder();
    const long = 'x'.repeat(11);
    cache.count(long, encoder.count);
    cache.count(long, encoder.count);
    assert.equal(encoder.asked.length, 2);
    assert.equal(cache.size, 0);
  });

  test('countPromptTokens agrees with the tokenizer, on a first count and on a remembered one, per encoding', () => {
    for (const text of ['hello there, how are you?', 'Grüße aus Köln — 東京でも', '{"type":"function","name":"get_weather"}']) {
      for (const tokenizer of ['o200k_base', 'cl100k_base'] as const) {
        const expected = countTokens(text, tokenizer);
        assert.equal(countPromptTokens(text, tokenizer), expected, `${tokenizer}: ${text}`);
        assert.equal(countPromptTokens(text, tokenizer), expected, `${tokenizer}, remembered: ${text}`);
      }
    }
    assert.notEqual(
      countTokens('東京でも', 'o200k_base'),
      countTokens('東京でも', 'cl100k_base'),
      'the encodings differ on this text, so a shared cache would show',
    );
  });
});
