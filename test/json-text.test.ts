// Reading and changing JSON text without parsing it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonText, jsonBodyText, withTopLevelString } from '../src/json-text.js';

test('a top-level string is changed in place, the rest of the text kept byte for byte', () => {
  const text = '{"id":"x","model":"up","n":1.0,"s":"caf\\u00e9"}';
  assert.equal(withTopLevelString(text, 'model', 'up', 'pub'), '{"id":"x","model":"pub","n":1.0,"s":"caf\\u00e9"}');
});

test('a new value that needs escaping is written as JSON', () => {
  assert.equal(withTopLevelString('{"model":"up"}', 'model', 'up', 'a"b\\c'), '{"model":"a\\"b\\\\c"}');
});

test('a key inside a string never counts as the key', () => {
  const text = '{"note":"the \\"model\\":\\"up\\" text","model":"up"}';
  assert.equal(withTopLevelString(text, 'model', 'up', 'pub'), '{"note":"the \\"model\\":\\"up\\" text","model":"pub"}');
});

test('text that cannot be changed safely in place is refused', () => {
  assert.equal(withTopLevelString('{"model": "up"}', 'model', 'up', 'pub'), undefined, 'spaced');
  assert.equal(withTopLevelString('{"model":"other"}', 'model', 'up', 'pub'), undefined, 'another value');
  assert.equal(withTopLevelString('{"a":{"model":"up"}}', 'model', 'up', 'pub'), undefined, 'nested only');
  assert.equal(withTopLevelString('{"model":"up","b":{"model":"up"}}', 'model', 'up', 'pub'), undefined, 'twice');
  assert.equal(withTopLevelString('{"a":1}', 'model', 'up', 'pub'), undefined, 'absent');
  assert.equal(withTopLevelString('[{"model":"up"}]', 'model', 'up', 'pub'), undefined, 'not an object');
});

test('a body is sent as its text when it has one, else as JSON.stringify writes it', () => {
  assert.equal(jsonBodyText(new JsonText('{ "a": 1.0 }')), '{ "a": 1.0 }');
  assert.equal(jsonBodyText({ a: 1.0 }), '{"a":1}');
});
