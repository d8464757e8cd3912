// Reading a 200 from the images upstream: only a real images answer is ever billed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MalformedAnswerError } from '../../../src/upstreams/malformed.js';
import { readImagesAnswer } from '../../../src/upstreams/openai-images/client.js';

test('an images answer with urls or base64 entries is read as it came', () => {
  const answer = {
    created: 1_700_000_000,
    data: [{ url: 'https://img/1.png' }, { b64_json: 'iVBORw0KGgo=' }],
    usage: { input_tokens: 3, output_tokens: 1056 },
  };
  assert.deepEqual(readImagesAnswer(JSON.stringify(answer)), answer);
});

const malformed: Record<string, string> = {
  'a body that is not JSON': '<html>502 Bad Gateway</html>',
  'a truncated body': '{"created":1700000000,"data":[{"url":"https://img',
  'JSON without a data array': '{"created":1700000000}',
  'a data field that is not an array': '{"data":{"url":"https://img/1.png"}}',
  'an empty data array': '{"created":1700000000,"data":[]}',
  'an entry without an image': '{"data":[{"url":"https://img/1.png"},{"revised_prompt":"x"}]}',
  'a JSON array': '[{"url":"https://img/1.png"}]',
};
for (const [name, body] of Object.entries(malformed)) {
  test(`${name} is a malformed answer, never zero images`, () => {
    assert.throws(() => readImagesAnswer(body), MalformedAnswerError);
  });
}
