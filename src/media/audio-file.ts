// What an uploaded recording is, read from its own bytes (never its name): its format, and how long
// it lasts by its header. Transcriptions take only the formats OpenAI's endpoint takes, and hold
// funds for the length the header states; a file the media library cannot read is not audio.
import { loadMediaLibrary } from './media-library.js';

export const TRANSCRIPTION_FORMATS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'ogg', 'wav', 'webm'] as const;

/** The format as music-metadata names its container; several of OpenAI's names are one container. */
export type AudioContainer = 'flac' | 'mp4' | 'mpeg' | 'ogg' | 'wav' | 'webm';

export type InspectedAudio = { ok: true; container: AudioContainer; seconds: number } | { ok: false; problem: string };

// The brands an MP4 family file (m4a, mp4) names in its `ftyp` box, as music-metadata reports them.
const MP4_BRANDS = new Set(['m4a', 'm4b', 'm4p', 'isom', 'iso2', 'iso3', 'iso4', 'iso5', 'iso6', 'mp41', 'mp42', 'mp71', 'dash', 'avc1', 'f4a', 'f4v']);

/** The container music-metadata read ("WAVE", "MPEG", "Ogg", "EBML/webm", "M4A/isom/iso2"…), when it is one transcriptions take. */
export function containerOf(container: string | undefined, codec: string | undefined): AudioContainer | undefined {
  if (!container) return undefined;
  const name = container.toLowerCase();
  if (name === 'wave') return 'wav';
  if (name === 'flac') return 'flac';
  if (name === 'ogg') return 'ogg';
  if (name === 'ebml/webm') return 'webm';
  // MPEG audio layers 1 to 3 (mp3, mpga); ADTS AAC reports the same container with another codec.
  if (name === 'mpeg') return codec?.startsWith('MPEG') ? 'mpeg' : undefined;
  if (name.split('/').some((brand) => MP4_BRANDS.has(brand.trim()))) return 'mp4';
  return undefined;
}

const NOT_AUDIO = `file: not audio in a supported format (${TRANSCRIPTION_FORMATS.join(', ')})`;

/**
 * The format and length of a recording on this gateway's disk. The header's own figure first; a
 * format that keeps no length there (a recorder's WebM) is read through once more to measure it.
 */
export async function inspectAudioFile(path: string): Promise<InspectedAudio> {
  let read = await parse(path, false);
  if (!read) return { ok: false, problem: NOT_AUDIO };
  const container = containerOf(read.container, read.codec);
  if (!container) return { ok: false, problem: `${NOT_AUDIO}; this file is ${read.container ?? 'of an unknown format'}` };
  if (!validSeconds(read.duration)) read = (await parse(path, true)) ?? read;
  if (!validSeconds(read.duration)) return { ok: false, problem: 'file: the length of the audio cannot be read from the file' };
  return { ok: true, container, seconds: read.duration };
}

const validSeconds = (seconds: number | undefined): seconds is number => typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0;

async function parse(path: string, measure: boolean) {
  try {
    const { parseFile } = await loadMediaLibrary();
    const { format } = await parseFile(path, { duration: measure, skipCovers: true, skipPostHeaders: !measure });
    return { container: format.container, codec: format.codec, duration: format.duration };
  } catch {
    return undefined; // not a format the library knows, or a header it cannot read
  }
}
