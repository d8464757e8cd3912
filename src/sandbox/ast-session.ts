import { setTimeout as delay } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { AST_EVENTS, decodeTranslateRequest, encodeTranslateResponse, type ResponseMeta, type TranslateRequest, type TranslateResponse } from './ast-proto.js';
import type { FaultRule } from './faults.js';
import { malformedFrame } from './malformed.js';
import { oggOpusPages } from './ogg.js';
import { midStreamErrorMessage } from './reply.js';
import type { LoggedRequest } from './requests-log.js';
import { SPEECH_CODES } from './speech.js';
import { words } from './text.js';

// One AST 2.0 session over an accepted WebSocket (volcengine-formats.md §4): binary messages of one protobuf
// each. The answer is a function of the PCM byte count, so a test can compute texts and billing. The fault
// rule's frame behaviours (delay, drop, error, malformed) are applied as frames go out.

/** 16 kHz × 16-bit mono: 32 bytes of PCM per millisecond. */
const PCM_BYTES_PER_MS = 32;
/** Each input token is 40 ms of speech. */
const MS_PER_INPUT_TOKEN = 40;
const SOURCE_AUDIO = { rate: 16000, bits: 16, channel: 1 } as const;
const OK_META = { StatusCode: SPEECH_CODES.ok, Message: 'OK' };

type Frame = TranslateResponse & { response_meta: ResponseMeta };

interface SessionConfig {
  mode: 's2t' | 's2s';
  targetLanguage: string;
  voice: string;
}

/** One connection, one session: StartSession, audio, FinishSession; then the results, and the socket closes. */
export class AstSession {
  private phase: 'waiting' | 'started' | 'answering' | 'ended' = 'waiting';
  private config: SessionConfig = { mode: 's2t', targetLanguage: '', voice: '' };
  private sessionId = '';
  private audioBytes = 0;
  private sent = 0;
  private closedByServer = false;
  private loggedBody: Record<string, unknown> = {};
  /** Frames are handled one after another, so a FinishSession never overtakes the audio before it. */
  private queue = Promise.resolve();

  constructor(
    private readonly ws: WebSocket,
    private readonly entry: LoggedRequest,
    private readonly rule: FaultRule | undefined,
  ) {}

  start(): void {
    this.ws.on('error', () => {});
    this.ws.on('close', () => {
      if (!this.closedByServer) this.entry.aborted = true;
    });
    this.ws.on('message', (data, isBinary) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      this.queue = this.queue.then(() => this.receive(bytes, isBinary)).catch(() => this.cut());
    });
    if (this.rule?.drop_after_chunks === 0) this.cut();
  }

  private async receive(bytes: Buffer, isBinary: boolean): Promise<void> {
    // once the answer is under way, late frames change nothing
    if (this.phase === 'answering' || this.phase === 'ended') return;
    if (!isBinary) return this.fail(SPEECH_CODES.invalidParams, 'expected binary frames, each one protobuf TranslateRequest');
    let request: TranslateRequest;
    try {
      request = decodeTranslateRequest(bytes);
    } catch (error) {
      return this.fail(SPEECH_CODES.invalidParams, `malformed TranslateRequest: ${(error as Error).message}`);
    }
    const event = request.event ?? 0;
    if (this.phase === 'waiting') {
      if (event !== AST_EVENTS.StartSession) return this.fail(SPEECH_CODES.invalidParams, `event ${event} before StartSession (100)`);
      return this.startSession(request);
    }
    if (event === AST_EVENTS.TaskRequest) {
      this.audioBytes += request.source_audio?.binary_data?.length ?? 0;
      this.loggedBody.audio_bytes = this.audioBytes;
    } else if (event === AST_EVENTS.FinishSession) return this.answer();
    else if (event !== AST_EVENTS.UpdateConfig) {
      return this.fail(SPEECH_CODES.invalidParams, `event ${event}: not expected in a started session`);
    }
  }

  private async startSession(request: TranslateRequest): Promise<void> {
    const config = sessionConfig(request);
    if (typeof config === 'string') return this.fail(SPEECH_CODES.invalidParams, config);
    this.config = config;
    this.sessionId = request.request_meta?.SessionID ?? '';
    const { request_meta, user, source_audio, target_audio, request: params } = request;
    const { binary_data: _audio, ...sourceAudio } = source_audio ?? {};
    this.loggedBody = { request_meta, user, source_audio: sourceAudio, target_audio, request: params, audio_bytes: 0 };
    // the log entry is written at upgrade time, before any frame; it learns the session's parameters now
    (this.entry as { body: unknown }).body = this.loggedBody;
    this.phase = 'started';
    if (!(await this.send({ event: AST_EVENTS.SessionStarted, response_meta: OK_META }))) return;
    if (this.rule?.task_outcome === 'failed') return this.fail(SPEECH_CODES.server, 'ServerInternalError');
  }

  private async answer(): Promise<void> {
    this.phase = 'answering';
    const durationMs = Math.floor(this.audioBytes / PCM_BYTES_PER_MS);
    const source = `source speech of ${durationMs} ms`;
    const translation = `[${this.config.targetLanguage || 'en'}] translated speech of ${durationMs} ms`;
    const billing = {
      duration_ms: durationMs,
      input_tokens: Math.ceil(durationMs / MS_PER_INPUT_TOKEN),
      output_tokens: words(translation).length,
    };
    const frames: TranslateResponse[] = [
      { event: AST_EVENTS.SourceSubtitleResponse, text: partial(source) },
      { event: AST_EVENTS.SourceSubtitleEnd, text: source },
      { event: AST_EVENTS.TranslationSubtitleResponse, text: partial(translation) },
      { event: AST_EVENTS.TranslationSubtitleEnd, text: translation },
    ];
    for (const frame of frames) if (!(await this.send({ ...frame, response_meta: OK_META }))) return;
    if (this.config.mode === 's2s') {
      for (const page of oggOpusPages({ durationMs, ...this.config })) {
        if (!(await this.send({ event: AST_EVENTS.TTSResponse, response_meta: OK_META, data: page }))) return;
      }
    }
    if (!(await this.send({ event: AST_EVENTS.UsageResponse, response_meta: { ...OK_META, billing } }))) return;
    if (!(await this.send({ event: AST_EVENTS.SessionFinished, response_meta: OK_META }))) return;
    this.end();
  }

  /** SessionFailed with the reason, then the socket closes: the session cannot go on. */
  private async fail(statusCode: number, message: string): Promise<void> {
    this.phase = 'ended';
    if (await this.send({ event: AST_EVENTS.SessionFailed, response_meta: { StatusCode: statusCode, Message: message } })) this.end();
  }

  /** Sends one frame, after the fault's delay; false when the session should stop (client gone, dropped, faulted). */
  private async send(response: Frame): Promise<boolean> {
    const { chunk_delay_ms: chunkDelayMs } = this.rule ?? {};
    if (chunkDelayMs) await delay(chunkDelayMs);
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    if (await this.sendFaultInstead(response)) return false;
    const written = await this.sendFrame(this.encode(response));
    if (this.sent === this.rule?.drop_after_chunks) {
      this.cut(); // after the write: the frame must reach the client before the connection breaks
      return false;
    }
    return written && this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends what the fault rule puts in this frame's place, if anything; true when that ended the session. */
  private async sendFaultInstead(response: Frame): Promise<boolean> {
    const { drop_after_chunks: dropAfter, error_after_chunks: errorAfter, malformed } = this.rule ?? {};
    // a faulted session never sends SessionFinished, however short it is
    const finishing = response.event === AST_EVENTS.SessionFinished;
    if (malformed) {
      await this.sendFrame(malformedFrame(this.encode(response)));
      this.end();
      return true;
    }
    // SessionFailed is the error itself: the one this fault sends goes through
    if (errorAfter !== undefined && response.event !== AST_EVENTS.SessionFailed && (this.sent >= errorAfter || finishing)) {
      await this.fail(SPEECH_CODES.server, `ServerInternalError (${midStreamErrorMessage(this.sent)})`);
      return true;
    }
    if (dropAfter !== undefined && finishing) {
      this.cut();
      return true;
    }
    return false;
  }

  /** Numbers the frame: Sequence counts every frame sent, broken ones included. */
  private encode(response: Frame): Buffer {
    this.sent += 1;
    const meta = { SessionID: this.sessionId, Sequence: this.sent, ...response.response_meta };
    return encodeTranslateResponse({ ...response, response_meta: meta });
  }

  /** Waiting for each write is the backpressure: a slow reader slows the session down. */
  private sendFrame(frame: Buffer): Promise<boolean> {
    return new Promise<boolean>((resolve) => this.ws.send(frame, { binary: true }, (error) => resolve(!error)));
  }

  private end(): void {
    this.phase = 'ended';
    this.closedByServer = true;
    this.ws.close(1000);
  }

  /** Breaks the connection without a closing handshake (a drop fault, or an error in the sandbox). */
  private cut(): void {
    this.phase = 'ended';
    this.closedByServer = true;
    this.ws.terminate();
  }
}

function sessionConfig({ request, source_audio: source, target_audio: target }: TranslateRequest): SessionConfig | string {
  const mode = request?.mode;
  if (mode !== 's2t' && mode !== 's2s') return 'request.mode: expected "s2t" or "s2s"';
  if (source?.format !== 'wav' && source?.format !== 'pcm') return 'source_audio.format: expected "wav" (raw PCM)';
  for (const [name, want] of Object.entries(SOURCE_AUDIO)) {
    const got = source[name as keyof typeof SOURCE_AUDIO];
    if (got !== want) return `source_audio.${name}: expected ${want}, got ${got ?? 'nothing'}`;
  }
  if (mode === 's2s' && target?.format !== 'ogg_opus') return 'target_audio.format: expected "ogg_opus" for s2s';
  return { mode, targetLanguage: request?.target_language ?? '', voice: request?.voice ?? '' };
}

/** The first half of the words (rounded up): what a partial subtitle shows before the sentence ends. */
function partial(text: string): string {
  const all = words(text);
  return all.slice(0, Math.ceil(all.length / 2)).join(' ');
}
