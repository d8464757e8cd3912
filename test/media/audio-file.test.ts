// Telling an upload's audio format and length from its own bytes, never its name.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { containerOf, inspectAudioFile } from '../../src/media/audio-file.js';
import { oggOpusPages } from '../../src/sandbox/ogg.js';
import { makeWav } from '../helpers/wav.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-audio-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;
const onDisk = (bytes: Buffer) => {
  const file = path.join(dir, `upload_${count++}`); // no extension: the content alone tells
  writeFileSync(file, bytes);
  return file;
};

/** MPEG-1 layer 3 frames at 128 kbps and 44.1 kHz: 417 bytes and 1152 samples each. */
function mp3Frames(count: number): Buffer {
  const frame = Buffer.alloc(417);
  frame.writeUInt32BE(0xfffb9000, 0);
  return Buffer.concat(Array.from({ length: count }, () => frame));
}

/** A FLAC stream of `seconds` at 16 kHz, its length in STREAMINFO. */
function flac(seconds: number): Buffer {
  const info = Buffer.alloc(34);
  info.writeUInt16BE(4096, 0);
  info.writeUInt16BE(4096, 2);
  info.writeUInt32BE(((16_000 << 12) | (15 << 4)) >>> 0, 10); // rate, mono, 16 bits, samples' high bits 0
  info.writeUInt32BE(16_000 * seconds, 14);
  return Buffer.concat([Buffer.from('fLaC'), Buffer.from([0x80, 0, 0, 34]), info, Buffer.alloc(64)]);
}

test('a WAV is wav, its length from its header', async () => {
  assert.deepEqual(await inspectAudioFile(onDisk(makeWav({ ms: 2_500 }))), { ok: true, container: 'wav', seconds: 2.5 });
});

test('Ogg Opus, FLAC and MP3 are told by their content', async () => {
  const ogg = Buffer.concat(oggOpusPages({ durationMs: 3_000, voice: '', targetLanguage: 'en' }));
  assert.deepEqual(await inspectAudioFile(onDisk(ogg)), { ok: true, container: 'ogg', seconds: 3 });
  assert.deepEqual(await inspectAudioFile(onDisk(flac(4))), { ok: true, container: 'flac', seconds: 4 });
  const mp3 = await inspectAudioFile(onDisk(mp3Frames(200)));
  assert.ok(mp3.ok && mp3.container === 'mpeg' && Math.abs(mp3.seconds - (200 * 1152) / 44_100) < 0.1, JSON.stringify(mp3));
});

test('a file that is not audio is refused naming file and the formats taken', async () => {
  for (const bytes of [Buffer.from('%PDF-1.7 a document'), Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(0)]) {
    assert.deepEqual(await inspectAudioFile(onDisk(bytes)), {
      ok: false,
      problem: 'file: not audio in a supported format (flac, m4a, mp3, mp4, mpeg, mpga, ogg, wav, webm)',
    });
  }
});

test('the containers music-metadata names map to the formats transcriptions take, and no others', () => {
  assert.equal(containerOf('WAVE', 'PCM'), 'wav');
  assert.equal(containerOf('MPEG', 'MPEG 1 Layer 3'), 'mpeg');
  assert.equal(containerOf('MPEG', 'AAC'), undefined);
  assert.equal(containerOf('EBML/webm', 'OPUS'), 'webm');
  assert.equal(containerOf('EBML/matroska', 'OPUS'), undefined);
  assert.equal(containerOf('M4A/isom/iso2', 'AAC'), 'mp4');
  assert.equal(containerOf('isom/iso2/avc1/mp41', 'AAC'), 'mp4');
  assert.equal(containerOf('AIFF', 'PCM'), undefined);
  assert.equal(containerOf(undefined, undefined), undefined);
});
