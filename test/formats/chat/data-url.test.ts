// data: URLs, the form chat completions carries inline images and files in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { partOfDataUrl } from '../../../src/formats/data-url.js';

test('a base64 data URL gives its media type and its data without the prefix', () => {
  assert.deepEqual(partOfDataUrl('data:image/png;base64,iVBORw0KGgo='), { mediaType: 'image/png', data: 'iVBORw0KGgo=' });
});

test('an https URL is not a data URL', () => {
  assert.equal(partOfDataUrl('https://example.com/data:image/png;base64,AAAA'), undefined);
});

test('a data URL that is not base64 is not read as inline bytes', () => {
  assert.equal(partOfDataUrl('data:text/plain,hello'), undefined);
});

test('a data URL without a media type is not read as inline bytes', () => {
  assert.equal(partOfDataUrl('data:;base64,AAAA'), undefined);
});
