// The NDJSON tap: every line is shown to the observer, and the upstream's bytes go on unchanged,
// however the upstream cut them into chunks.
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { test } from 'node:test';
import { observeNdjson } from '../../src/upstreams/ndjson.js';

const LINES = [
  '{"code":0,"message":"","data":"SUQzBAAAAAAAAP/zZKZDsgejIbYSBzw5"}',
  '{"code":0,"message":"été — 音声","data":"vCOdSy7DQ2EzON+l3PFHHTJw"}',
  '',
  'data: {"code":0,"data":"cUBH"}',
  '{"code":20000000,"message":"ok","data":null,"usage":{"text_words":113}}',
];
const WHOLE = Buffer.from(`${LINES.join('\n')}\n`);

/** Cuts `bytes` every `size` bytes (through lines and through multi-byte characters). */
const cut = (bytes: Buffer, size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

async function readAll(body: Readable): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const chunk of body) out.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(out);
}

for (const size of [1, 7, 64, WHOLE.length]) {
  test(`chunks of ${size} bytes: the bytes go on unchanged and every line is observed once`, async () => {
    const seen: unknown[] = [];
    const out = await readAll(observeNdjson(Readable.from(cut(WHOLE, size)), (line) => seen.push(line)));
    assert.ok(out.equals(WHOLE));
    assert.deepEqual(
      seen,
      LINES.filter(Boolean).map((line) => JSON.parse(line.replace(/^data: /, ''))),
    );
  });
}

test('a last line without its newline is observed and forwarded at the end', async () => {
  const seen: unknown[] = [];
  const body = Buffer.from('{"code":0}\n{"code":20000000}');
  const out = await readAll(observeNdjson(Readable.from([body]), (line) => seen.push(line)));
  assert.ok(out.equals(body));
  assert.deepEqual(seen, [{ code: 0 }, { code: 20000000 }]);
});

test('a partial line is held back until its newline arrives', async () => {
  const upstream = new PassThrough();
  const tap = observeNdjson(upstream, () => {});
  const forwarded: Buffer[] = [];
  tap.on('data', (chunk: Buffer) => forwarded.push(chunk));
  upstream.write('{"code":0,"da');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(forwarded.length, 0);
  upstream.end('ta":"x"}\n');
  await new Promise((resolve) => tap.once('end', resolve));
  assert.equal(Buffer.concat(forwarded).toString(), '{"code":0,"data":"x"}\n');
});

test('an observer that throws fails the stream with its error', async () => {
  const tap = observeNdjson(Readable.from([Buffer.from('{"code":45000001}\n')]), (line: { code: number }) => {
    throw new Error(`refused: ${line.code}`);
  });
  await assert.rejects(readAll(tap), /refused: 45000001/);
});

test('bytes that are not valid UTF-8 go on as the upstream sent them', async () => {
  const body = Buffer.concat([Buffer.from('{"code":0,"message":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]);
  const out = await readAll(observeNdjson(Readable.from([body]), () => {}));
  assert.ok(out.equals(body));
});

test('a line the skimmer reads is neither parsed nor shown to the observer, and its bytes go on unchanged', async () => {
  for (const size of [1, 7, WHOLE.length]) {
    const seen: unknown[] = [];
    const skimmed: string[] = [];
    // Skims the audio lines of LINES (those with a data string), as the speech client does.
    const skim = (bytes: Buffer, start: number, end: number) => {
      const line = bytes.toString('utf8', start, end);
      if (!/"data":"/.test(line)) return false;
      skimmed.push(line);
      return true;
    };
    const out = await readAll(observeNdjson(Readable.from(cut(WHOLE, size)), (line) => seen.push(line), skim));
    assert.ok(out.equals(WHOLE));
    assert.deepEqual(skimmed, [LINES[0], LINES[1], LINES[3]]);
    assert.deepEqual(seen, [JSON.parse(LINES[4]!)]);
  }
});
