// inspectWavFile: the upload on disk is judged exactly as inspectWav judges the same bytes in memory.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { inspectWav } from '../../../src/upstreams/volc-ast/wav.js';
import { inspectWavFile } from '../../../src/upstreams/volc-ast/wav-file.js';
import { makeWav } from '../../helpers/wav.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-wav-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const onDisk = (bytes: Buffer) => {
  const file = path.join(dir, `w${n++}.wav`);
  writeFileSync(file, bytes);
  return file;
};

function chunk(id: string, body: Buffer, size = body.length): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(size >>> 0, 4);
  return Buffer.concat([header, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

function fmt({ format = 1, channels = 1, rate = 16_000, bits = 16, extra = 0 }) {
  const body = Buffer.alloc(16 + extra);
  body.writeUInt16LE(format, 0);
  body.writeUInt16LE(channels, 2);
  body.writeUInt32LE(rate, 4);
  body.writeUInt16LE(bits, 14);
  return body;
}

test('a plain WAV on disk is inspected as in memory', async () => {
  const bytes = makeWav({ ms: 1_500 });
  assert.deepEqual(await inspectWavFile(onDisk(bytes)), inspectWav(bytes));
  assert.deepEqual(await inspectWavFile(onDisk(bytes)), {
    ok: true,
    sampleRate: 16_000,
    channels: 1,
    bitsPerSample: 16,
    audioFormat: 1,
    dataOffset: 44,
    dataLength: 48_000,
    durationMs: 1500,
  });
});

test('any sequence of chunks, sizes that lie, and a cut anywhere give the same answer from disk as from memory', async () => {
  const anyChunk = fc
    .oneof(
      fc.record({
        id: fc.constant('fmt '),
        body: fc
          .record({
            format: fc.constantFrom(1, 3, 0xfffe),
            channels: fc.integer({ min: 0, max: 3 }),
            rate: fc.constantFrom(0, 8_000, 16_000),
            bits: fc.constantFrom(0, 8, 16),
            extra: fc.integer({ min: 0, max: 40 }),
          })
          .map(fmt),
      }),
      fc.record({ id: fc.constantFrom('data', 'JUNK', 'LIST', 'fmt '), body: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) }),
    )
    .chain((c) =>
      fc.record({
        id: fc.constant(c.id),
        body: fc.constant(c.body),
        lie: fc.option(fc.constantFrom(0, 1, 0xffffffff, c.body.length + 1_000), { nil: undefined }),
      }),
    );
  await fc.assert(
    fc.asyncProperty(fc.array(anyChunk, { maxLength: 6 }), fc.option(fc.nat(2_000), { nil: undefined }), async (chunks, cut) => {
      const body = Buffer.concat(chunks.map((c) => chunk(c.id, c.body, c.lie ?? c.body.length)));
      const whole = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), body]);
      const bytes = cut === undefined ? whole : whole.subarray(0, cut);
      assert.deepEqual(await inspectWavFile(onDisk(bytes)), inspectWav(bytes));
    }),
    { numRuns: 300 },
  );
});

test('a file of 100 000 tiny chunks before its data is walked in a few reads, not one per chunk', async () => {
  const junk = Buffer.concat(Array.from({ length: 100_000 }, () => chunk('JUNK', Buffer.alloc(2))));
  const bytes = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), chunk('fmt ', fmt({})), junk, chunk('data', Buffer.alloc(3200))]);
  const started = performance.now();
  const inspected = await inspectWavFile(onDisk(bytes));
  assert.deepEqual(inspected, inspectWav(bytes));
  assert.ok(inspected.ok && inspected.dataLength === 3200);
  assert.ok(performance.now() - started < 2_000, `took ${Math.round(performance.now() - started)} ms`);
});
