// RIFF/WAVE inspection for uploads bound to AST 2.0, which takes only 16 kHz mono 16-bit PCM.
// Pure: bytes in, facts or a problem out.

export type WavInspection =
  | {
      ok: true;
      sampleRate: number;
      channels: number;
      bitsPerSample: number;
      /** The effective format code: the sub-format's code for WAVE_FORMAT_EXTENSIBLE, so PCM is 1 either way. */
      audioFormat: number;
      /** Where the sample bytes start, and how many there are (clamped to the bytes actually present). */
      dataOffset: number;
      dataLength: number;
      durationMs: number;
    }
  | { ok: false; problem: string };

export const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
// Every KSDATAFORMAT_SUBTYPE_* GUID (xxxxxxxx-0000-0010-8000-00aa00389b71, stored little-endian) is a
// 2-byte format code followed by this fixed 14-byte tail.
const SUBFORMAT_GUID_TAIL = Buffer.from('000000001000800000aa00389b71', 'hex');

/** What AST 2.0 accepts as source audio (volcengine-formats §4.3). */
export const TRANSLATION_WAV = { sampleRate: 16_000, channels: 1, bitsPerSample: 16 } as const;

interface Format {
  audioFormat: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
}

/** One read the walk needs: `length` bytes at `offset` (fewer come back at the end of the file). */
export interface WavRead {
  offset: number;
  length: number;
}

// parseFormat reads at most 40 bytes: a larger fmt chunk is never read whole (its size may lie).
const FMT_READ_BYTES = 64;

/**
 * The chunk walk, written once for bytes in memory (inspectWav) and a file on disk
 * (inspectWavFile): it yields the reads it needs and is sent their bytes, so it only ever reads
 * the RIFF header, the chunk headers and the start of the fmt chunk, never the samples.
 */
export function* walkWav(size: number): Generator<WavRead, WavInspection, Buffer> {
  const head = yield { offset: 0, length: 12 };
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') {
    return { ok: false, problem: 'not a RIFF/WAVE file' };
  }
  // The RIFF size is not trusted: writers on a pipe leave it 0 or 0xFFFFFFFF; the real length is the truth.
  let format: Format | undefined;
  let data: { offset: number; length: number } | undefined;
  let offset = 12;
  while (offset + 8 <= size && !(format && data)) {
    const header = yield { offset, length: 8 };
    if (header.length < 8) break;
    const id = header.toString('latin1', 0, 4);
    const chunkSize = header.readUInt32LE(4);
    const body = offset + 8;
    const present = Math.min(chunkSize, size - body);
    if (id === 'fmt ' && !format) {
      const parsed = parseFormat(yield { offset: body, length: Math.min(present, FMT_READ_BYTES) });
      if (typeof parsed === 'string') return { ok: false, problem: parsed };
      format = parsed;
    } else if (id === 'data' && !data) {
      // A size past the end (0xFFFFFFFF from a streaming writer, or a cut file) means "to the end".
      data = { offset: body, length: present };
    }
    offset = body + chunkSize + (chunkSize & 1); // chunks are word-aligned: an odd size is followed by a pad byte
  }
  if (!format) return { ok: false, problem: 'no fmt chunk' };
  if (!data) return { ok: false, problem: 'no data chunk' };
  const bytesPerSecond = format.sampleRate * format.channels * Math.ceil(format.bitsPerSample / 8);
  return {
    ok: true,
    ...format,
    dataOffset: data.offset,
    dataLength: data.length,
    durationMs: Math.round((data.length * 1000) / bytesPerSecond),
  };
}

export function inspectWav(bytes: Buffer): WavInspection {
  const walk = walkWav(bytes.length);
  let step = walk.next();
  while (!step.done) step = walk.next(bytes.subarray(step.value.offset, step.value.offset + step.value.length));
  return step.value;
}

function parseFormat(fmt: Buffer): Format | string {
  if (fmt.length < 16) return 'fmt chunk is too short';
  let audioFormat = fmt.readUInt16LE(0);
  const channels = fmt.readUInt16LE(2);
  const sampleRate = fmt.readUInt32LE(4);
  const bitsPerSample = fmt.readUInt16LE(14);
  if (channels === 0) return 'fmt chunk declares 0 channels';
  if (sampleRate === 0) return 'fmt chunk declares a sample rate of 0';
  if (bitsPerSample === 0) return 'fmt chunk declares 0 bits per sample';
  if (audioFormat === WAVE_FORMAT_EXTENSIBLE) {
    // cbSize(2) validBits(2) channelMask(4) subFormat GUID(16) follow the 16 base bytes.
    if (fmt.length < 40) return 'fmt chunk is too short for WAVE_FORMAT_EXTENSIBLE';
    const guid = fmt.subarray(24, 40);
    // An unknown GUID keeps the extensible code, which is then reported as "not PCM (format 65534)".
    if (guid.subarray(2).equals(SUBFORMAT_GUID_TAIL)) audioFormat = guid.readUInt16LE(0);
  }
  return { audioFormat, channels, sampleRate, bitsPerSample };
}

/** `undefined` when AST 2.0 can take the file as it is; otherwise the one property at fault. */
export function checkTranslationWav(bytes: Buffer): string | undefined {
  return translationWavProblem(inspectWav(bytes));
}

/** The same judgement over an inspection already made (of a file on disk: inspectWavFile). */
export function translationWavProblem(wav: WavInspection): string | undefined {
  if (!wav.ok) return `file: ${wav.problem}`;
  if (wav.audioFormat !== WAVE_FORMAT_PCM) return `file: not PCM (format ${wav.audioFormat}); expected PCM`;
  if (wav.sampleRate !== TRANSLATION_WAV.sampleRate) {
    return `file: sample rate is ${wav.sampleRate} Hz; expected 16000 Hz (16 kHz, mono, 16-bit PCM WAV)`;
  }
  if (wav.channels !== TRANSLATION_WAV.channels) return `file: ${wav.channels} channels; expected mono`;
  if (wav.bitsPerSample !== TRANSLATION_WAV.bitsPerSample) return `file: ${wav.bitsPerSample}-bit samples; expected 16-bit`;
  if (wav.dataLength === 0) return 'file: no audio (empty data chunk)';
  return undefined;
}
