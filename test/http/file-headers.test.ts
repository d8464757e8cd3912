// The headers an upload is served with: a type no browser runs, and a name that stays a name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attachmentDisposition, servedContentType } from '../../src/http/file-headers.js';

test('media, PDF and plain text keep their type; everything a browser could run becomes bytes', () => {
  const cases: [string | null, string][] = [
    ['audio/mpeg', 'audio/mpeg'],
    ['audio/wav', 'audio/wav'],
    ['Audio/X-WAV; rate=16000', 'audio/x-wav'],
    ['video/mp4', 'video/mp4'],
    ['image/png', 'image/png'],
    ['image/jpeg', 'image/jpeg'],
    ['image/gif', 'image/gif'],
    ['image/webp', 'image/webp'],
    ['application/pdf', 'application/pdf'],
    ['text/plain', 'text/plain; charset=utf-8'],
    ['text/plain; charset=utf-7', 'text/plain; charset=utf-8'],
    ['text/html', 'application/octet-stream'],
    ['text/html; charset=utf-8', 'application/octet-stream'],
    ['image/svg+xml', 'application/octet-stream'],
    ['application/xhtml+xml', 'application/octet-stream'],
    ['text/xml', 'application/octet-stream'],
    ['application/xml', 'application/octet-stream'],
    ['text/javascript', 'application/octet-stream'],
    ['application/json', 'application/octet-stream'],
    ['multipart/x-mixed-replace', 'application/octet-stream'],
    ['audio/', 'application/octet-stream'],
    ['audio/mpeg\r\nx-evil: 1', 'application/octet-stream'],
    ['', 'application/octet-stream'],
    [null, 'application/octet-stream'],
  ];
  for (const [uploaded, served] of cases) assert.equal(servedContentType(uploaded), served, String(uploaded));
});

test('the name is an attachment: an ASCII fallback nothing can break out of, and the exact name in filename*', () => {
  const cases: [string, string][] = [
    ['meeting.mp3', `attachment; filename="meeting.mp3"; filename*=UTF-8''meeting.mp3`],
    ['a"b\\c;d%.pdf', `attachment; filename="a_b_c_d_.pdf"; filename*=UTF-8''a%22b%5Cc%3Bd%25.pdf`],
    ['x\r\nSet-Cookie: a=b', `attachment; filename="xSet-Cookie: a=b"; filename*=UTF-8''xSet-Cookie%3A%20a%3Db`],
    ["it's (1).txt", `attachment; filename="it's (1).txt"; filename*=UTF-8''it%27s%20%281%29.txt`],
    ['会议.wav', `attachment; filename="__.wav"; filename*=UTF-8''%E4%BC%9A%E8%AE%AE.wav`],
    ['\ud800lone.wav', `attachment; filename="_lone.wav"; filename*=UTF-8''%EF%BF%BDlone.wav`],
    ['', `attachment; filename="file"; filename*=UTF-8''file`],
  ];
  for (const [name, header] of cases) assert.equal(attachmentDisposition(name), header, JSON.stringify(name));
  assert.ok(attachmentDisposition('😀'.repeat(10_000)).length < 4_000, 'a long name is cut to 255 code points');
});
