// Speech is billed per character of req_params.text: the upstream's own count when it sends one.

/** Characters as a person counts them: Unicode code points, punctuation included. */
export const characterCount = (text: string): number => [...text].length;

export const SYNTHESIS_DONE = 20_000_000;

export interface SpeechLine {
  code?: number;
  message?: string;
  data?: string | null;
  usage?: { text_words?: number };
}

export class SpeechUpstreamError extends Error {
  override name = 'SpeechUpstreamError';
}

/**
 * Follows the line stream: remembers the last usage.text_words (authoritative, the last one
 * applies) and turns an error code on the first line into a failed call (nothing sent yet).
 */
export class SpeechStreamMeter {
  textWords: number | undefined;
  lines = 0;

  observe(line: SpeechLine): void {
    this.lines += 1;
    if (typeof line.usage?.text_words === 'number') this.textWords = line.usage.text_words;
    const failed = typeof line.code === 'number' && line.code !== 0 && line.code !== SYNTHESIS_DONE;
    if (failed && this.lines === 1) throw new SpeechUpstreamError(`speech upstream refused: ${line.code} ${line.message ?? ''}`.trim());
  }

  characters(estimate: number): number {
    return this.textWords ?? estimate;
  }
}
