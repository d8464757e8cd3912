// WAV inspection: chunks found however they are ordered or padded, and the property at fault named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkTranslationWav, inspectWav } from '../../../src/upstreams/volc-ast/wav.js';

/** One RIFF chunk: id, little-endian size, body, and the pad byte an odd size needs. */
function chunk(id: string, body: Buffer, size = body.length): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(size, 4);
  return Buffer.concat([header, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

const PCM_GUID_TAIL = '000000001000800000aa00389b71';

function fmtBody(o: { format?: number; channels?: number; sampleRate?: number; bits?: number; subformat?: number; guidTail?: string }) {
  const format = o.subformat === undefined ? (o.format ?? 1) : 0xfffe;
  const channels = o.channels ?? 1;
  const sampleRate = o.sampleRate ?? 16_000;
  const bits = o.bits ?? 16;
  const body = Buffer.alloc(o.subformat === undefined ? 16 : 40);
  body.writeUInt16LE(format, 0);
  body.writeUInt16LE(channels, 2);
  body.writeUInt32LE(sampleRate, 4);
  body.writeUInt32LE((sampleRate * channels * bits) / 8, 8);
  body.writeUInt16LE((channels * bits) / 8, 12);
  body.writeUInt16LE(bits, 14);
  if (o.subformat !== undefined) {
    body.writeUInt16LE(22, 16); // cbSize
    body.writeUInt16LE(bits, 18); // valid bits
    body.writeUInt32LE(channels === 1 ? 0x4 : 0x3, 20); // channel mask
    body.writeUInt16LE(o.subformat, 24);
    Buffer.from(o.guidTail ?? PCM_GUID_TAIL, 'hex').copy(body, 26);
  }
  return body;
}

/** A whole file: RIFF header, then the chunks as given (fmt and data by default). */
function wav(chunks: Buffer[], riff = 'RIFF', wave = 'WAVE'): Buffer {
  const body = Buffer.concat(chunks);
  const header = Buffer.alloc(12);
  header.write(riff, 0, 'latin1');
  header.writeUInt32LE(body.length + 4, 4);
  header.write(wave, 8, 'latin1');
  return Buffer.concat([header, body]);
}

const samples = (bytes: number) => Buffer.alloc(bytes, 0x11);
const simple = (o: Parameters<typeof fmtBody>[0] = {}, data = samples(3200)) => wav([chunk('fmt ', fmtBody(o)), chunk('data', data)]);

test('a 16 kHz mono 16-bit PCM file is accepted, with its data located and its duration measured', () => {
  const file = simple({}, samples(32_000));
  assert.deepEqual(inspectWav(file), {
    ok: true,
    sampleRate: 16_000,
    channels: 1,
    bitsPerSample: 16,
    audioFormat: 1,
    dataOffset: 44,
    dataLength: 32_000,
    durationMs: 1000,
  });
  assert.equal(checkTranslationWav(file), undefined);
});

test('unknown chunks, odd sizes and their pad bytes are stepped over to reach fmt and data', () => {
  const file = wav([
    chunk('JUNK', Buffer.alloc(3, 0xff)), // odd: one pad byte follows
    chunk('fmt ', fmtBody({})),
    chunk('LIST', Buffer.from('INFOISFT\x05\x00\x00\x00Lavf\x00', 'latin1')),
    chunk('data', samples(6400)),
    chunk('id3 ', Buffer.alloc(7)),
  ]);
  const info = inspectWav(file);
  assert.deepEqual(info, {
    ok: true,
    sampleRate: 16_000,
    channels: 1,
    bitsPerSample: 16,
    audioFormat: 1,
    dataOffset: 12 + 12 + 24 + 26 + 8,
    dataLength: 6400,
    durationMs: 200,
  });
  assert.equal(file.subarray(info.ok ? info.dataOffset : 0, (info.ok ? info.dataOffset : 0) + 6400).equals(samples(6400)), true);
});

test('data before fmt is still found', () => {
  const info = inspectWav(wav([chunk('data', samples(320)), chunk('fmt ', fmtBody({}))]));
  assert.deepEqual(info, { ok: true, sampleRate: 16_000, channels: 1, bitsPerSample: 16, audioFormat: 1, dataOffset: 20, dataLength: 320, durationMs: 10 });
});

test('WAVE_FORMAT_EXTENSIBLE with the PCM sub-format counts as PCM', () => {
  const file = wav([chunk('fmt ', fmtBody({ subformat: 1 })), chunk('data', samples(3200))]);
  assert.deepEqual(inspectWav(file), {
    ok: true,
    sampleRate: 16_000,
    channels: 1,
    bitsPerSample: 16,
    audioFormat: 1,
    dataOffset: 12 + 48 + 8,
    dataLength: 3200,
    durationMs: 100,
  });
  assert.equal(checkTranslationWav(file), undefined);
});

test('WAVE_FORMAT_EXTENSIBLE with the float sub-format, or an unknown GUID, is not PCM', () => {
  const float = wav([chunk('fmt ', fmtBody({ subformat: 3, bits: 32 })), chunk('data', samples(3200))]);
  assert.equal(checkTranslationWav(float), 'file: not PCM (format 3); expected PCM');
  const odd = wav([chunk('fmt ', fmtBody({ subformat: 1, guidTail: 'ff'.repeat(14) })), chunk('data', samples(3200))]);
  assert.equal(checkTranslationWav(odd), 'file: not PCM (format 65534); expected PCM');
});

test('a data size past the end of the file (a streaming writer) is read as "to the end"', () => {
  const file = wav([chunk('fmt ', fmtBody({})), chunk('data', samples(1600), 0xffffffff)]);
  const info = inspectWav(file);
  assert.equal(info.ok && info.dataLength, 1600);
  assert.equal(checkTranslationWav(file), undefined);
});

test('each wrong property is named on its own', () => {
  assert.equal(checkTranslationWav(simple({ sampleRate: 44_100 })), 'file: sample rate is 44100 Hz; expected 16000 Hz (16 kHz, mono, 16-bit PCM WAV)');
  assert.equal(checkTranslationWav(simple({ channels: 2 })), 'file: 2 channels; expected mono');
  assert.equal(checkTranslationWav(simple({ bits: 24 })), 'file: 24-bit samples; expected 16-bit');
  assert.equal(checkTranslationWav(simple({ bits: 8 })), 'file: 8-bit samples; expected 16-bit');
  assert.equal(checkTranslationWav(simple({ format: 3, bits: 32 })), 'file: not PCM (format 3); expected PCM');
  assert.equal(checkTranslationWav(simple({ format: 6, bits: 8 })), 'file: not PCM (format 6); expected PCM');
});

test('properties of a wrong file are still reported exactly', () => {
  assert.deepEqual(inspectWav(simple({ sampleRate: 44_100, channels: 2, bits: 24 }, samples(44_100 * 6))), {
    ok: true,
    sampleRate: 44_100,
    channels: 2,
    bitsPerSample: 24,
    audioFormat: 1,
    dataOffset: 44,
    dataLength: 264_600,
    durationMs: 1000,
  });
});

test('files that are not RIFF/WAVE are refused as such', () => {
  for (const file of [
    Buffer.alloc(0),
    Buffer.from('RIFF'),
    Buffer.from('ID3\x04 some mp3 bytes'),
    wav([], 'RIFX'),
    wav([chunk('fmt ', fmtBody({}))], 'RIFF', 'AVI '),
  ]) {
    assert.deepEqual(inspectWav(file), { ok: false, problem: 'not a RIFF/WAVE file' });
    assert.equal(checkTranslationWav(file), 'file: not a RIFF/WAVE file');
  }
});

test('a missing data chunk, an empty one, and missing or short fmt chunks are named', () => {
  assert.equal(checkTranslationWav(wav([chunk('fmt ', fmtBody({})), chunk('LIST', Buffer.alloc(4))])), 'file: no data chunk');
  assert.equal(checkTranslationWav(simple({}, Buffer.alloc(0))), 'file: no audio (empty data chunk)');
  assert.equal(checkTranslationWav(wav([chunk('data', samples(320))])), 'file: no fmt chunk');
  assert.equal(checkTranslationWav(wav([chunk('fmt ', Buffer.alloc(14)), chunk('data', samples(320))])), 'file: fmt chunk is too short');
  const shortExtensible = fmtBody({}).subarray();
  shortExtensible.writeUInt16LE(0xfffe, 0);
  assert.equal(
    checkTranslationWav(wav([chunk('fmt ', shortExtensible), chunk('data', samples(320))])),
    'file: fmt chunk is too short for WAVE_FORMAT_EXTENSIBLE',
  );
  assert.equal(checkTranslationWav(simple({ channels: 0 })), 'file: fmt chunk declares 0 channels');
  assert.equal(checkTranslationWav(simple({ sampleRate: 0 })), 'file: fmt chunk declares a sample rate of 0');
});

test('a file cut inside a chunk header ends the search without throwing', () => {
  const file = simple().subarray(0, 12 + 24 + 5);
  assert.deepEqual(inspectWav(file), { ok: false, problem: 'no data chunk' });
});
