// A stream's output, kept as bytes until counted, must count as the text it joins into would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OutputCounter } from '../../src/billing/output-counter.js';
import { countTokens } from '../../src/billing/tokens.js';

const PIECES = ['Hello', ', ', 'wörld', ' 漢字', ' 🎉', '', ' and a longer piece of text that goes on for a while'];

test('pieces given as text and as bytes count as their joined text', () => {
  const counter = new OutputCounter('o200k_base');
  PIECES.forEach((piece, i) => {
    if (i % 2 === 0) counter.add(piece);
    else {
      const bytes = Buffer.from(`"${piece}"`);
      counter.addBytes(bytes, 1, bytes.length - 1);
    }
  });
  const joined = PIECES.join('');
  assert.equal(counter.pendingText(), joined);
  assert.equal(counter.pieces, PIECES.filter((p) => p !== '').length);
  assert.equal(counter.tokens(), countTokens(joined, 'o200k_base'));
});

test('output far past the first buffer is kept whole', () => {
  const counter = new OutputCounter('o200k_base');
  const pieces = Array.from({ length: 2000 }, (_, i) => ` word${i} é`);
  for (const piece of pieces) counter.add(piece);
  assert.equal(counter.pendingText(), pieces.join(''));
});

test('a surrogate pair cut between two pieces is joined, as the pieces would be', () => {
  const counter = new OutputCounter('o200k_base');
  const emoji = '🎉';
  counter.add(`party ${emoji[0]}`);
  counter.add(`${emoji[1]} time`);
  assert.equal(counter.pendingText(), 'party 🎉 time');
  assert.equal(counter.tokens(), countTokens('party 🎉 time', 'o200k_base'));
});

test('counting empties what is kept, and later output adds to the count', () => {
  const counter = new OutputCounter('o200k_base');
  counter.add('one two three');
  const first = counter.tokens();
  assert.equal(first, countTokens('one two three', 'o200k_base'));
  assert.equal(counter.pendingText(), '');
  counter.add(' four');
  assert.equal(counter.tokens(), first + countTokens(' four', 'o200k_base'));
});
