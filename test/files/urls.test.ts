// Upload URLs: what the gateway hands out, and which URLs are exactly one of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileUrl, ownFileId, urlFileName } from '../../src/files/urls.js';
import { parseUserUrl } from '../../src/net/url-policy.js';

const ID = `file_${'ab'.repeat(16)}`;
const own = (raw: string, publicUrl = 'http://127.0.0.1:8080') => {
  const parsed = parseUserUrl(raw);
  return 'url' in parsed ? ownFileId(parsed.url, publicUrl) : `refused: ${parsed.problem}`;
};

test('the name in a file URL needs no escaping and is never a dot segment', () => {
  assert.deepEqual(['meeting.mp3', '会议 记录.wav', '..', '.', '...', '', 'a/../b', '"><script>.html', 'x'.repeat(300)].map(urlFileName), [
    'meeting.mp3',
    '_.wav',
    'file',
    'file',
    'file',
    'file',
    'a_.._b',
    '_script_.html',
    'x'.repeat(200),
  ]);
  assert.equal(fileUrl('https://gw.example/api', { id: ID, filename: '..' }), `https://gw.example/api/files/${ID}/file`);
});

test('only the exact address of an upload, on the public origin and path, is one', () => {
  const cases: [string, string | undefined][] = [
    [`http://127.0.0.1:8080/files/${ID}/meeting.mp3`, ID],
    [`http://127.0.0.1:8080/x/../files/${ID}/meeting.mp3`, ID], // resolved first: it is that address
    [`http://127.0.0.1:8080/files/${ID}/meeting.mp3?x=1`, undefined],
    [`http://127.0.0.1:8080/files/${ID}`, undefined],
    [`http://127.0.0.1:8080/files/${ID}/a/b`, undefined],
    [`http://127.0.0.1:8080/files/${ID}/..`, undefined],
    [`http://127.0.0.1:8080/files/${ID}/%2e%2e`, 'refused: url: must not contain an encoded dot segment (%2e%2e)'],
    [`http://127.0.0.1:8080/files/${ID}/a%20b.mp3`, undefined],
    [`http://127.0.0.1:8080/files/file_${'AB'.repeat(16)}/x`, undefined],
    ['http://127.0.0.1:8080/files/../metrics', undefined],
    ['http://127.0.0.1:8080/files/', undefined],
    [`http://127.0.0.1:8081/files/${ID}/x`, undefined],
    [`https://127.0.0.1:8080/files/${ID}/x`, undefined],
    [`http://localhost:8080/files/${ID}/x`, undefined],
  ];
  for (const [raw, expected] of cases) assert.equal(own(raw), expected, raw);
});

test('a public URL with a path: uploads live under it, and nothing outside it counts', () => {
  assert.equal(own(`https://gw.example/api/files/${ID}/a.mp3`, 'https://gw.example/api'), ID);
  assert.equal(own(`https://gw.example/files/${ID}/a.mp3`, 'https://gw.example/api'), undefined);
  assert.equal(own(`https://gw.example/apifiles/${ID}/a.mp3`, 'https://gw.example/api'), undefined);
});
