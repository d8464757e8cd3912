import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../src/http/canonical-json.js';

test('objects whose fields differ only in order, at any depth, give the same canonical JSON', () => {
  const a = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], n: 1 };
  const b = { n: 1, messages: [{ content: [{ text: 'hi', type: 'text' }], role: 'user' }], model: 'm' };
  assert.equal(canonicalJson(a), canonicalJson(b));
  assert.equal(canonicalJson(a), '{"messages":[{"content":[{"text":"hi","type":"text"}],"role":"user"}],"model":"m","n":1}');
});

test('canonical JSON keeps the order of arrays and leaves out undefined fields as JSON.stringify does', () => {
  assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
  const value = { b: undefined, a: [undefined, null, 'x"y'], c: { d: new Date(0) } };
  assert.deepEqual(JSON.parse(canonicalJson(value)), JSON.parse(JSON.stringify(value)));
  assert.equal(canonicalJson(undefined), 'null');
});
