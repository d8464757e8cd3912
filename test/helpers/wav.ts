// Building WAV files for tests: any rate, channel count and sample size.
export function makeWav({
  sampleRate = 16_000,
  channels = 1,
  bits = 16,
  ms = 1_000,
  format = 1,
}: {
  sampleRate?: number;
  channels?: number;
  bits?: number;
  ms?: number;
  format?: number;
} = {}): Buffer {
  const dataLength = Math.floor((sampleRate * ms) / 1000) * channels * (bits / 8);
  const wav = Buffer.alloc(44 + dataLength);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + dataLength, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(format, 20);
  wav.writeUInt16LE(channels, 22);
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE((sampleRate * channels * bits) / 8, 28);
  wav.writeUInt16LE((channels * bits) / 8, 32);
  wav.writeUInt16LE(bits, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataLength, 40);
  for (let i = 44; i < wav.length; i++) wav[i] = (i * 31) & 0xff; // not silence
  return wav;
}
