// RFC 4180 fields, as the usage export writes them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvLine } from '../../src/account/csv.js';

test('plain text and numbers are written as they are, a line ending in CRLF', () => {
  assert.equal(csvLine(['use_1', 42, 'sandbox-chat']), 'use_1,42,sandbox-chat\r\n');
});

test('a field holding a comma, a quote, a lone CR or a lone LF is quoted, its quotes doubled', () => {
  assert.equal(csvLine(['a,b', 'say "hi"', 'one\rtwo', 'one\ntwo']), '"a,b","say ""hi""","one\rtwo","one\ntwo"\r\n');
});

test('null and undefined are empty fields, and an object is its JSON text, quoted', () => {
  assert.equal(csvLine([null, undefined, { input_token: 3 }, 'end']), ',,"{""input_token"":3}",end\r\n');
});
