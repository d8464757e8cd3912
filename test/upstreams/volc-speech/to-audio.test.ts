// The OpenAI-compatible speech answer: the audio of every line, in order, however the lines were cut.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { linesToAudio } from '../../../src/upstreams/volc-speech/to-audio.js';

const audioLine = (audio: Buffer) => JSON.stringify({ code: 0, message: '', data: audio.toString('base64') });
const AUDIO = [randomBytes(300), randomBytes(1), randomBytes(4096), randomBytes(77), randomBytes(50)];
const LINES = [
  audioLine(AUDIO[0]!),
  '{"code":0,"message":"","data":null,"sentence":{"text":"其他人。"}}',
  `${audioLine(AUDIO[1]!)}\r`, // a CRLF line end
  `  ${audioLine(AUDIO[2]!)}`,
  // the same shape with the slashes of its base64 escaped, as some JSON writers do: parsed
  audioLine(AUDIO[3]!).replaceAll('/', '\\/'),
  // another shape carrying audio: parsed
  JSON.stringify({ code: 0, message: 'été', data: AUDIO[4]!.toString('base64') }),
  '{"code":0,"message":"","data":""}',
  '{"code":20000000,"message":"ok","data":null,"usage":{"text_words":10}}',
];
const WHOLE = Buffer.from(`${LINES.join('\n')}\n`);
const EXPECTED = Buffer.concat(
  LINES.map((line) => JSON.parse(line).data)
    .filter(Boolean)
    .map((data: string) => Buffer.from(data, 'base64')),
);

const cut = (bytes: Buffer, size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

async function audioOfStream(chunks: Buffer[], prefix?: Buffer): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const chunk of Readable.from(chunks).pipe(linesToAudio(prefix))) out.push(chunk as Buffer);
  return Buffer.concat(out);
}

for (const size of [1, 7, 1000, WHOLE.length]) {
  test(`lines cut every ${size} bytes give the audio of every line, in order`, async () => {
    assert.deepEqual(await audioOfStream(cut(WHOLE, size)), EXPECTED);
  });
}

test('the prefix comes once, before the audio', async () => {
  const prefix = Buffer.from('RIFF-header');
  assert.deepEqual(await audioOfStream(cut(WHOLE, 100), prefix), Buffer.concat([prefix, EXPECTED]));
});

test('a last line without its newline still gives its audio', async () => {
  const last = audioLine(AUDIO[0]!);
  assert.deepEqual(await audioOfStream([Buffer.from(last)]), AUDIO[0]);
});

test('a line that is not JSON fails the stream', async () => {
  await assert.rejects(audioOfStream([Buffer.from('{"code":0,"data":\n')]));
});
