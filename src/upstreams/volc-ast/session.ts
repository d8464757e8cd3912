// What one AST 2.0 session said, gathered from its decoded responses (volcengine-formats §4.4 step 4).
// Pure state: no socket, no clock; the client feeds it and reads the outcome.
import { EVENT, type TranslateResponse } from './proto.js';

export interface AstUsage {
  input_token: number;
  output_token: number;
  durationMs: number;
}

export type SessionOutcome = { state: 'running' } | { state: 'finished' } | { state: 'failed'; event: number; statusCode: number; message: string };

export class TranslationCollector {
  /** `true` once SessionStarted (150) has arrived: audio may be sent. */
  started = false;
  outcome: SessionOutcome = { state: 'running' };
  /** The last usage report: a later UsageResponse is taken to supersede an earlier one. */
  usage: AstUsage | undefined;
  audioBytes = 0;
  readonly #source: string[] = [];
  readonly #translation: string[] = [];
  readonly #onAudio: ((chunk: Buffer) => void) | undefined;
  readonly #onTranslation: ((sentence: string) => void) | undefined;

  /**
   * `onAudio` receives each TTSResponse (352) payload in arrival order; together they make one Ogg/Opus file.
   * `onTranslation` receives each final translated sentence (655) as it comes.
   */
  constructor(onAudio?: (chunk: Buffer) => void, onTranslation?: (sentence: string) => void) {
    this.#onAudio = onAudio;
    this.#onTranslation = onTranslation;
  }

  get sourceText(): string {
    return this.#source.join(' ');
  }

  get text(): string {
    return this.#translation.join(' ');
  }

  observe(response: TranslateResponse): void {
    if (this.outcome.state !== 'running') return; // nothing after the end counts
    const meta = response.response_meta;
    switch (response.event) {
      case EVENT.SessionStarted:
        this.started = true;
        break;
      // 651/654 are partials of the same sentence; only the End events carry the final text.
      case EVENT.SourceSubtitleEnd:
        keepSentence(this.#source, response.text);
        break;
      case EVENT.TranslationSubtitleEnd:
        if (keepSentence(this.#translation, response.text)) this.#onTranslation?.(this.#translation.at(-1)!);
        break;
      case EVENT.TTSResponse:
        if (response.data.length > 0) {
          this.audioBytes += response.data.length;
          this.#onAudio?.(response.data);
        }
        break;
      case EVENT.UsageResponse:
        if (meta?.billing) {
          const { input_tokens, output_tokens, duration_ms } = meta.billing;
          this.usage = { input_token: input_tokens, output_token: output_tokens, durationMs: duration_ms };
        }
        break;
      case EVENT.SessionFinished:
        this.outcome = { state: 'finished' };
        break;
      case EVENT.SessionFailed:
      case EVENT.SessionCanceled: {
        const what = response.event === EVENT.SessionFailed ? 'session failed' : 'session canceled';
        const statusCode = meta?.StatusCode ?? 0;
        const message = meta?.Message || (statusCode ? `${what} (status ${statusCode})` : what);
        this.outcome = { state: 'failed', event: response.event, statusCode, message };
        break;
      }
      default:
        break; // 650/653 starts, TTS sentence marks, AudioMuted and the unknown carry nothing we keep
    }
  }
}

/** Keeps a sentence that says something: true when it was kept. */
function keepSentence(sentences: string[], text: string): boolean {
  const trimmed = text.trim();
  if (trimmed) sentences.push(trimmed);
  return trimmed !== '';
}

/** A failure the upstream's own client retries (volcengine-formats §4.4 step 5); auth and quota ones it does not. */
export function isTransientFailure(message: string): boolean {
  return message.includes('Engine:1022') || message.includes('ServerInternalError');
}
