// A batch's input file read into lines, or refused naming the line and field at fault.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_BATCH_LINES, parseBatchInput } from '../../src/batches/input-file.js';

const line = (customId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [] }, ...extra });
const refusal = (text: string) => {
  try {
    parseBatchInput(text, '/v1/chat/completions');
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail('not refused');
};

describe('batch input files', () => {
  test('lines are numbered in order and blank lines passed over', () => {
    const lines = parseBatchInput(`${line('a')}\n\n${line('b')}\r\n`, '/v1/chat/completions');
    assert.deepEqual(
      lines.map((l) => [l.line_no, l.custom_id, JSON.parse(l.body).model]),
      [
        [1, 'a', 'm'],
        [2, 'b', 'm'],
      ],
    );
  });
  test('a line that is not JSON is refused naming its line', () => assert.match(refusal(`${line('a')}\n{oops`), /^input_file_id: line 2: not JSON/));
  test('a duplicate custom_id is refused', () => assert.match(refusal(`${line('a')}\n${line('a')}`), /^input_file_id: line 2: custom_id:/));
  test('a method other than POST is refused', () => assert.match(refusal(line('a', { method: 'GET' })), /line 1: method:/));
  test('a url other than the batch’s endpoint is refused', () => assert.match(refusal(line('a', { url: '/v1/messages' })), /line 1: url: .* differs/));
  test('a url batches do not call is refused', () => assert.match(refusal(line('a', { url: '/v1/images/generations' })), /line 1: url: must be one of/));
  test('a body that asks for a stream is refused', () => assert.match(refusal(line('a', { body: { stream: true } })), /line 1: body.stream:/));
  test('a line without a body object is refused', () => assert.match(refusal(line('a', { body: 'text' })), /line 1: body:/));
  test('an empty file is refused', () => assert.match(refusal('\n\n'), /holds no requests/));
  test(`more than ${MAX_BATCH_LINES} lines are refused`, () => {
    const text = Array.from({ length: MAX_BATCH_LINES + 1 }, (_, i) => line(`c${i}`)).join('\n');
    assert.match(refusal(text), /more than 50000 requests/);
  });
});
