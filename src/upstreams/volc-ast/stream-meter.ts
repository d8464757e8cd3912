// The meter of a translated-speech (s2s) stream. The session's usage comes only with its end
// (UsageResponse), so a caller who leaves before it is billed what the speech delivered so far
// covers (DESIGN §5): the source audio up to the length of the translated speech sent, at the
// hold's input rate, and that share of the translated words. Neither is more than the whole
// call's: the source is counted no longer than it is, and the upstream counts a translation's
// tokens no fewer than its words.
import type { Units } from '../../billing/prices.js';
import type { AudioCovered, StreamMeter } from '../../pipeline/types.js';
import { OggClock } from './ogg-clock.js';

const wordCount = (text: string) => text.split(/\s+/).filter((word) => word !== '').length;

export interface TranslationSource {
  /** The source audio's length. */
  durationMs: number;
  /** The input tokens a second of source audio is held at (the estimate's rate). */
  inputTokensPerSecond: number;
}

export class TranslationMeter implements StreamMeter {
  failed = false;
  completed = false;
  private usage: Units | undefined;
  private audioBytes = 0;
  private translatedWords = 0;
  private readonly clock = new OggClock();

  constructor(
    private readonly estimate: Units,
    private readonly source: TranslationSource,
  ) {}

  /** A piece of the translated speech, as it goes to the caller. */
  observeAudio(chunk: Buffer): void {
    this.audioBytes += chunk.length;
    this.clock.read(chunk);
  }

  /** A final translated sentence. */
  observeTranslation(sentence: string): void {
    this.translatedWords += wordCount(sentence);
  }

  finish(usage: Units | undefined): void {
    this.usage = usage;
    this.completed = true;
  }

  reported(): Units | undefined {
    return this.completed ? (this.usage ?? this.estimate) : undefined;
  }

  /** Nothing of the gateway's own to count as tokens: what a caller who leaves pays is audioCovered's. */
  delivered(): Units {
    return {};
  }

  /**
   * No audio yet (no bytes, or only the Ogg header pages); else the source audio covered by the
   * speech sent (all of it when the speech is not Ogg and its length cannot be read).
   */
  audioCovered(): AudioCovered {
    if (this.audioBytes === 0) return { kind: 'none' };
    const { durationMs, inputTokensPerSecond } = this.source;
    const coveredMs = this.clock.isOgg ? Math.min(this.clock.playedMs(), durationMs) : durationMs;
    if (coveredMs <= 0) return { kind: 'none' };
    const share = durationMs > 0 ? coveredMs / durationMs : 1;
    return {
      kind: 'measured',
      units: {
        input_token: Math.ceil((coveredMs * inputTokensPerSecond) / 1000),
        output_token: Math.floor(this.translatedWords * share),
      },
    };
  }
}
