// Ogg Opus bytes for the sandbox's translated speech: real page framing and CRCs, filler audio.
import { seededBytes } from './speech.js';

const OGG_BOS = 0x02;
const OGG_EOS = 0x04;
const OPUS_PRE_SKIP = 312;
const OPUS_SAMPLES_PER_PACKET = 960; // 20 ms at Opus's 48 kHz granule clock
const MS_PER_PACKET = 20;
const PACKETS_PER_PAGE = 50;
/** A TOC byte (CELT fullband, 20 ms, mono, one frame) then filler. */
const OPUS_TOC = 0xf8;
const PACKET_BYTES = 40;

/** One Ogg page per TTSResponse frame: OpusHead, OpusTags (naming the voice), then 20 ms packets, 50 to a page. */
export function oggOpusPages({ durationMs, voice, targetLanguage }: { durationMs: number; voice: string; targetLanguage: string }): Buffer[] {
  const seed = `${voice}\n${targetLanguage}\n${durationMs}`;
  const serial = seededBytes(seed, 4).readUInt32LE(0);
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head.writeUInt8(1, 8); // version
  head.writeUInt8(1, 9); // channels
  head.writeUInt16LE(OPUS_PRE_SKIP, 10);
  head.writeUInt32LE(24000, 12); // the input rate asked for in target_audio
  const comments = voice ? [`VOICE=${voice}`] : [];
  const tags = Buffer.concat([Buffer.from('OpusTags'), lengthPrefixed('tollroute sandbox'), u32(comments.length), ...comments.map(lengthPrefixed)]);
  const pages = [oggPage({ headerType: OGG_BOS, granule: 0, serial, sequence: 0, packets: [head] })];
  pages.push(oggPage({ headerType: 0, granule: 0, serial, sequence: 1, packets: [tags] }));
  const packetCount = Math.max(1, Math.ceil(durationMs / MS_PER_PACKET));
  for (let first = 0; first < packetCount; first += PACKETS_PER_PAGE) {
    const count = Math.min(PACKETS_PER_PAGE, packetCount - first);
    const sequence = pages.length;
    const filler = seededBytes(`${seed}\npage ${sequence}`, count * (PACKET_BYTES - 1));
    const packets = Array.from({ length: count }, (_, i) =>
      Buffer.concat([Buffer.of(OPUS_TOC), filler.subarray(i * (PACKET_BYTES - 1), (i + 1) * (PACKET_BYTES - 1))]),
    );
    const last = first + count === packetCount;
    const granule = OPUS_PRE_SKIP + (first + count) * OPUS_SAMPLES_PER_PACKET;
    pages.push(oggPage({ headerType: last ? OGG_EOS : 0, granule, serial, sequence, packets }));
  }
  return pages;
}

interface OggPage {
  headerType: number;
  granule: number;
  serial: number;
  sequence: number;
  packets: Buffer[];
}

export function oggPage({ headerType, granule, serial, sequence, packets }: OggPage): Buffer {
  // lacing: 255 per full segment, then the remainder (0 when a packet is a multiple of 255)
  const lacing = packets.flatMap((packet) => [...Array<number>(Math.floor(packet.length / 255)).fill(255), packet.length % 255]);
  if (lacing.length > 255) throw new Error('an Ogg page holds at most 255 segments');
  const header = Buffer.alloc(27 + lacing.length);
  header.write('OggS', 0, 'latin1');
  header.writeUInt8(0, 4); // stream structure version
  header.writeUInt8(headerType, 5);
  header.writeBigUInt64LE(BigInt(granule), 6);
  header.writeUInt32LE(serial, 14);
  header.writeUInt32LE(sequence, 18);
  header.writeUInt8(lacing.length, 26);
  Buffer.from(lacing).copy(header, 27);
  const page = Buffer.concat([header, ...packets]);
  page.writeUInt32LE(oggCrc(page), 22); // computed with the CRC field still zero, as the format requires
  return page;
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n << 24;
  for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
  return c >>> 0;
});

/** Ogg's CRC-32: polynomial 0x04c11db7, initial 0, not reflected, no final xor. */
function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ byte) & 0xff] as number)) >>> 0;
  return crc;
}

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
}

function lengthPrefixed(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([u32(bytes.length), bytes]);
}
