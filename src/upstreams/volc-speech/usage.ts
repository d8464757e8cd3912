// Speech is billed per character of req_params.text: the upstream's own count when it sends one.
import type { AudioCovered, StreamMeter } from '../../pipeline/types.js';
import { AUDIO_LINE } from './audio-line.js';

/** Characters as a person counts them: Unicode code points, punctuation included. */
export const characterCount = (text: string): number => [...text].length;

export const SYNTHESIS_DONE = 20_000_000;

export interface SpeechLine {
  code?: number;
  message?: string;
  data?: string | null;
  usage?: { text_words?: number };
  /** A subtitle (asked for with enable_subtitle or enable_timestamp): the text of a sentence synthesised. */
  sentence?: { text?: unknown } | null;
}

export class SpeechUpstreamError extends Error {
  override name = 'SpeechUpstreamError';
}

/**
 * Follows the line stream: remembers the last usage.text_words (authoritative, the last one
 * applies), sees the end code, and turns an error code on the first line into a failed call
 * (nothing sent yet). An error code later is the stream's failure: the caller has seen the line.
 */
export class SpeechStreamMeter implements StreamMeter {
  textWords: number | undefined;
  lines = 0;
  /** Lines that carried audio. */
  audioLines = 0;
  /** Characters of the sentences whose subtitles came: what the audio so far covers, when subtitles were asked for. */
  sentenceCharacters: number | undefined;
  failed = false;
  private ended = false;

  /** `estimatedCharacters`: the text's own length, billed when the upstream reports no usage. */
  constructor(private readonly estimatedCharacters: number) {}

  get completed(): boolean {
    return this.ended && !this.failed;
  }

  observe(line: SpeechLine): void {
    this.lines += 1;
    if (typeof line.usage?.text_words === 'number') this.textWords = line.usage.text_words;
    if (typeof line.data === 'string' && line.data.length > 0) this.audioLines += 1;
    if (typeof line.sentence?.text === 'string') this.sentenceCharacters = (this.sentenceCharacters ?? 0) + characterCount(line.sentence.text);
    if (line.code === SYNTHESIS_DONE) this.ended = true;
    else if (typeof line.code === 'number' && line.code !== 0) {
      if (this.lines === 1) throw new SpeechUpstreamError(`speech upstream refused: ${line.code} ${line.message ?? ''}`.trim());
      this.failed = true;
    }
  }

  /** An audio line read on its bytes (audio-line.ts), as `observe` would have read it parsed. */
  observeAudioLine(carriesAudio: boolean): void {
    this.observe(AUDIO_LINE);
    if (carriesAudio) this.audioLines += 1;
  }

  /** The upstream's count, or the text's length (spec 4.1: the estimate when the upstream returns none). */
  reported(): { character: number } | undefined {
    return this.ended ? { character: this.textWords ?? this.estimatedCharacters } : undefined;
  }

  /** Speech reports usage only at the end: a stream cut short has nothing of its own to count. */
  delivered(): Record<string, never> {
    return {};
  }

  /**
   * What a caller who leaves is billed on: nothing before any audio; the characters of the
   * sentences whose subtitles came (never more than the text), when there were subtitles; else
   * unmeasured (the text's length is billed, what the whole call costs).
   */
  audioCovered(): AudioCovered {
    if (this.audioLines === 0) return { kind: 'none' };
    if (this.sentenceCharacters === undefined) return { kind: 'unmeasured' };
    return { kind: 'measured', units: { character: Math.min(this.sentenceCharacters, this.estimatedCharacters) } };
  }
}
