// How much speech an Ogg/Opus stream has carried so far, read from its page headers as the pages go
// by (RFC 3533 framing, RFC 7845 granule positions): no decoding, no buffering beyond a page header
// cut between two chunks. Pure: bytes in, milliseconds out.

const CAPTURE = Buffer.from('OggS', 'latin1');
const HEADER_BYTES = 27;
const BOS = 0x02;
/** A page on which no packet ends carries this granule position: it says nothing of the time. */
const NO_GRANULE = 0xffff_ffff_ffff_ffffn;
/** Opus counts granule positions at 48 kHz whatever the rate it was encoded from (RFC 7845 §4). */
const OPUS_SAMPLES_PER_MS = 48n;
/** OpusHead: magic (8), version, channel count, then the pre-skip (u16 LE) at offset 10. */
const OPUS_HEAD = 'OpusHead';
const OPUS_HEAD_BYTES = 12;

export class OggClock {
  /** The bytes after the last complete page header seen: a header cut by a chunk's end. */
  private tail: Buffer = Buffer.alloc(0);
  /** The logical stream's serial, from its first page: a capture pattern inside audio data rarely names it. */
  private serial: number | undefined;
  private preSkip = 0n;
  private granule = 0n;

  /** Reads the page headers `chunk` completes. */
  read(chunk: Buffer): void {
    const bytes = this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk;
    let at = bytes.indexOf(CAPTURE);
    let keepFrom = Math.max(0, bytes.length - (CAPTURE.length - 1)); // a capture pattern cut short
    while (at !== -1) {
      if (bytes.length - at < HEADER_BYTES) {
        keepFrom = at;
        break;
      }
      this.readHeader(bytes, at);
      at = bytes.indexOf(CAPTURE, at + CAPTURE.length);
    }
    this.tail = Buffer.from(bytes.subarray(keepFrom)); // a copy: the chunk itself goes on to the caller
  }

  /** Whether any Ogg page has come: until then the stream may not be Ogg at all. */
  get isOgg(): boolean {
    return this.serial !== undefined;
  }

  /** Milliseconds of speech the pages so far carry (0 for the header pages alone). */
  playedMs(): number {
    const samples = this.granule > this.preSkip ? this.granule - this.preSkip : 0n;
    return Number(samples / OPUS_SAMPLES_PER_MS);
  }

  private readHeader(bytes: Buffer, at: number): void {
    if (bytes[at + 4] !== 0) return; // stream structure version 0 is the only one
    const headerType = bytes[at + 5]!;
    const serial = bytes.readUInt32LE(at + 14);
    if (this.serial === undefined) {
      if ((headerType & BOS) === 0) return; // a stream is read from its first page
      this.serial = serial;
    } else if (serial !== this.serial) return;
    const segments = bytes[at + 26]!;
    const packet = at + HEADER_BYTES + segments;
    if (headerType & BOS && bytes.length >= packet + OPUS_HEAD_BYTES && bytes.toString('latin1', packet, packet + OPUS_HEAD.length) === OPUS_HEAD) {
      this.preSkip = BigInt(bytes.readUInt16LE(packet + 10));
    }
    const granule = bytes.readBigUInt64LE(at + 6);
    if (granule !== NO_GRANULE && granule > this.granule) this.granule = granule;
  }
}
