// The minutes record's `result`, built from what either upstream produced (pure).
import type { AsrResult } from '../../upstreams/volc-minutes/client.js';

export interface TranscriptSentence {
  speaker: string | null;
  start_ms: number;
  end_ms: number;
  text: string;
}

export interface Chapter {
  title: string;
  start_ms: number;
  end_ms: number;
  summary: string;
}

export interface MinutesResult {
  duration_seconds: number;
  transcript: TranscriptSentence[];
  summary?: unknown;
  chapters?: unknown;
  todos?: unknown;
  qa?: unknown;
  translation?: unknown;
}

const ms = (value: unknown): number => (typeof value === 'number' ? value : Number(value) || 0);

/** One sentence of the minutes product's transcription file, as far as it is read here. */
interface LarkSentence {
  speaker?: { name?: string; id?: string | number };
  start_time?: unknown;
  end_time?: unknown;
  content?: unknown;
}

/** The minutes product's transcription file: sentences with a speaker object. */
export function transcriptFromLark(file: unknown): TranscriptSentence[] {
  if (!Array.isArray(file)) return [];
  return (file as LarkSentence[]).map((s) => ({
    speaker: s.speaker?.name ?? (s.speaker?.id !== undefined ? String(s.speaker.id) : null),
    start_ms: ms(s.start_time),
    end_ms: ms(s.end_time),
    text: String(s.content ?? ''),
  }));
}

/** Recognition 2.0 utterances; word timings only when the caller asked for them. */
export function transcriptFromAsr(result: AsrResult, withWords: boolean): (TranscriptSentence & { words?: unknown[] })[] {
  return (result.result?.utterances ?? []).map((u) => ({
    speaker: u.additions?.speaker ?? null,
    start_ms: ms(u.start_time),
    end_ms: ms(u.end_time),
    text: u.text,
    ...(withWords && u.words && { words: u.words }),
  }));
}

const CHAPTER_MS = 10 * 60 * 1000;

/** When the summary model gives no chapters, the transcript is cut into ten-minute chapters. */
export function chaptersByTime(transcript: TranscriptSentence[]): Chapter[] {
  const chapters: Chapter[] = [];
  for (const sentence of transcript) {
    const index = Math.floor(sentence.start_ms / CHAPTER_MS);
    const chapter =
      chapters[index] ?? (chapters[index] = { title: sentence.text.slice(0, 60), start_ms: sentence.start_ms, end_ms: sentence.end_ms, summary: '' });
    chapter.end_ms = Math.max(chapter.end_ms, sentence.end_ms);
    chapter.summary = chapter.summary ? `${chapter.summary} ${sentence.text}` : sentence.text;
  }
  return chapters.filter(Boolean);
}

/** The summary model's answer: JSON `{summary, chapters}` when it followed the instructions, else plain text. */
export function readSummaryAnswer(text: string, transcript: TranscriptSentence[]): { summary: string; chapters: Chapter[] } {
  try {
    const parsed = JSON.parse(text) as { summary?: unknown; chapters?: unknown };
    if (typeof parsed.summary === 'string' && Array.isArray(parsed.chapters)) {
      return { summary: parsed.summary, chapters: parsed.chapters as Chapter[] };
    }
  } catch {
    // not JSON: the whole answer is the summary
  }
  return { summary: text, chapters: chaptersByTime(transcript) };
}

export const SUMMARY_INSTRUCTIONS =
  'Summarise this meeting transcript. Answer only JSON: {"summary": "<whole-text summary>", "chapters": [{"title": "...", "start_ms": 0, "end_ms": 0, "summary": "..."}]}.';
