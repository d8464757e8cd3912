// AST 2.0 speech translation over one WebSocket session: StartSession, the whole PCM as TaskRequest
// frames, FinishSession, then responses until SessionFinished or SessionFailed (volcengine-formats §4).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { headerValue } from '../http.js';
import { decodeTranslateResponse, EVENT, encodeTranslateRequest, type TranslateResponse } from './proto.js';
import { isTransientFailure, TranslationCollector } from './session.js';

export const TRANSLATE_PATH = '/api/v4/ast/v2/translate';
export const DEFAULT_RESOURCE_ID = 'volc.service_type.10053';
/** 100 ms of 16 kHz mono 16-bit PCM. */
export const FRAME_BYTES = 3200;
const PCM_BYTES_PER_MS = 32;
// Above this much unsent data the sender waits for the socket to drain instead of queueing the whole file.
const HIGH_WATER_BYTES = 256 * 1024;
// Without a caller's limit: connecting and starting, plus twice real time for the upstream to work through it.
const BASE_TIMEOUT_MS = 30_000;
const REFUSAL_BODY_LIMIT = 4 * 1024;

export type AstFailureKind = 'session_failed' | 'session_canceled' | 'handshake' | 'connection' | 'closed' | 'timeout' | 'protocol';

/** The translation upstream failed or could not be reached. An abort through the caller's signal rejects with the signal's reason instead. */
export class AstUpstreamError extends Error {
  override name = 'AstUpstreamError';
  readonly kind: AstFailureKind;
  /** `response_meta.StatusCode` of a failed session, or the HTTP status of a refused upgrade. */
  readonly statusCode: number | undefined;
  /** The upstream's `X-Tt-Logid`, which Volcengine asks for in every problem report. */
  readonly logId: string | undefined;
  /** Worth one more try: the upstream's transient failures, a connection that broke, a timeout. */
  readonly retryable: boolean;

  constructor(kind: AstFailureKind, message: string, details: { statusCode?: number; logId?: string; retryable?: boolean; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.statusCode = details.statusCode;
    this.logId = details.logId;
    this.retryable = details.retryable ?? false;
  }
}

export interface TranslateSpeechArgs {
  /** The channel's base_url; http(s) becomes ws(s). */
  baseUrl: string;
  appId?: string;
  accessKey?: string;
  resourceId?: string;
  mode: 's2t' | 's2s';
  sourceLanguage?: string;
  targetLanguage?: string;
  voice?: string;
  /** 16 kHz mono 16-bit PCM: the WAV's data chunk only, no header; in memory, or read as it is sent. */
  pcm: Buffer | PcmSource;
  signal: AbortSignal;
  /** Each Ogg/Opus piece of the translated speech (s2s), in order, as it arrives. */
  onAudio?: (chunk: Buffer) => void;
  /** Each final translated sentence, as it arrives. */
  onTranslation?: (sentence: string) => void;
  timeoutMs?: number;
}

/** PCM read only while it is sent (an upload spooled to disk): opened once the session has started. */
export interface PcmSource {
  /** Bytes `open()` yields in all. */
  length: number;
  /** Leaving the iteration early (the session failed or was aborted) must release it: a Readable does. */
  open(): AsyncIterable<Buffer>;
}

export interface SpeechTranslation {
  sourceText: string;
  text: string;
  usage: { input_token: number; output_token: number } | undefined;
  durationMs: number;
}

/** The reason in a refused upgrade's body: Volcengine's `{"code", "message"}`, else the text, cut short. */
async function readRefusal(response: IncomingMessage): Promise<string | undefined> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response) {
      parts.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= REFUSAL_BODY_LIMIT) break; // leaving the loop destroys the rest
    }
  } catch {
    // a body cut short still says what it said so far
  }
  const text = Buffer.concat(parts).toString('utf8', 0, Math.min(size, REFUSAL_BODY_LIMIT)).trim();
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string' && parsed.message) return parsed.message;
  } catch {
    // not JSON: the text itself
  }
  return text ? text.slice(0, 200) : undefined;
}

export function translateUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  else if (url.protocol === 'https:') url.protocol = 'wss:';
  else if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new Error(`base_url ${baseUrl}: expected an http(s) or ws(s) URL`);
  url.pathname = url.pathname.replace(/\/+$/, '') + TRANSLATE_PATH;
  return url.toString();
}

export async function translateSpeech(args: TranslateSpeechArgs): Promise<SpeechTranslation> {
  const { signal, pcm } = args;
  signal.throwIfAborted(); // honoured before dispatch: no connection for a caller already gone
  const url = translateUrl(args.baseUrl);
  const sessionId = randomUUID();
  const headers: Record<string, string> = {
    'X-Api-Resource-Id': args.resourceId ?? DEFAULT_RESOURCE_ID,
    'X-Api-Connect-Id': randomUUID(),
  };
  if (args.appId) headers['X-Api-App-Key'] = args.appId;
  if (args.accessKey) headers['X-Api-Access-Key'] = args.accessKey;
  const audioMs = Math.round(pcm.length / PCM_BYTES_PER_MS);
  const timeoutMs = args.timeoutMs ?? BASE_TIMEOUT_MS + 2 * audioMs;

  return new Promise<SpeechTranslation>((resolve, reject) => {
    const collector = new TranslationCollector(args.onAudio, args.onTranslation);
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    let logId: string | undefined;
    let settled = false;
    let sending = false;
    let markEnded!: () => void;
    const ended = new Promise<void>((r) => (markEnded = r));

    const onAbort = () => fail(signal.reason);
    const timer = setTimeout(
      () => fail(new AstUpstreamError('timeout', `speech translation took longer than ${timeoutMs} ms`, { logId, retryable: true })),
      timeoutMs,
    );
    signal.addEventListener('abort', onAbort, { once: true });

    function settle(): boolean {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      markEnded();
      return true;
    }
    function fail(error: unknown): void {
      if (!settle()) return;
      // The socket's listeners stay: a late 'error' with none attached would crash the process.
      ws.terminate();
      reject(error);
    }
    function succeed(): void {
      if (!settle()) return;
      ws.close(1000);
      const usage = collector.usage;
      resolve({
        sourceText: collector.sourceText,
        text: collector.text,
        usage: usage && { input_token: usage.input_token, output_token: usage.output_token },
        durationMs: usage?.durationMs || audioMs,
      });
    }

    /** Sends a frame; when the socket is already backed up, resolves once it has drained or the call has ended. */
    function send(frame: Buffer): Promise<void> | undefined {
      if (ws.bufferedAmount < HIGH_WATER_BYTES) {
        ws.send(frame);
        return undefined;
      }
      return Promise.race([new Promise<void>((drained) => ws.send(frame, () => drained())), ended]);
    }

    // No real-time pacing: the whole file goes as fast as the socket takes it.
    async function sendAudio(): Promise<void> {
      const meta = { SessionID: sessionId };
      for await (const binary_data of frames(pcm)) {
        if (settled) break; // leaving the loop closes a PCM source read from disk
        await send(encodeTranslateRequest({ request_meta: meta, event: EVENT.TaskRequest, source_audio: { binary_data } }));
      }
      if (!settled) await send(encodeTranslateRequest({ request_meta: meta, event: EVENT.FinishSession }));
    }

    ws.on('upgrade', (response) => {
      logId = headerValue(response.headers['x-tt-logid']);
    });
    ws.on('unexpected-response', (request, response) => {
      logId = headerValue(response.headers['x-tt-logid']);
      const status = response.statusCode ?? 0;
      void readRefusal(response).then((body) => {
        const reason = headerValue(response.headers['x-api-message']) ?? body;
        fail(
          new AstUpstreamError('handshake', `upstream refused the WebSocket upgrade with ${status}${reason ? `: ${reason}` : ''}`, {
            statusCode: status,
            logId,
            retryable: status >= 500 || status === 429,
          }),
        );
        request.destroy();
      });
    });
    ws.on('open', () => {
      ws.send(
        encodeTranslateRequest({
          request_meta: { SessionID: sessionId },
          event: EVENT.StartSession,
          user: { uid: 'tollroute', did: 'tollroute' },
          source_audio: { format: 'wav', codec: 'raw', rate: 16_000, bits: 16, channel: 1 },
          target_audio: args.mode === 's2s' ? { format: 'ogg_opus', rate: 24_000 } : undefined,
          request: { mode: args.mode, source_language: args.sourceLanguage, target_language: args.targetLanguage, voice: args.voice },
        }),
      );
    });
    ws.on('message', (data, isBinary) => {
      if (settled) return;
      const bytes = data as Buffer; // binaryType 'nodebuffer' (the default): always one Buffer
      if (!isBinary) {
        fail(new AstUpstreamError('protocol', `upstream sent a text frame: ${bytes.toString('utf8', 0, 200)}`, { logId }));
        return;
      }
      let response: TranslateResponse;
      try {
        response = decodeTranslateResponse(bytes);
      } catch (error) {
        fail(new AstUpstreamError('protocol', `upstream sent an undecodable message: ${(error as Error).message}`, { logId, cause: error }));
        return;
      }
      try {
        collector.observe(response);
      } catch (error) {
        fail(error); // the caller's onAudio threw: its own error, not the upstream's
        return;
      }
      const outcome = collector.outcome;
      if (outcome.state === 'finished') succeed();
      else if (outcome.state === 'failed') {
        const canceled = outcome.event === EVENT.SessionCanceled;
        fail(
          new AstUpstreamError(canceled ? 'session_canceled' : 'session_failed', `AST session ${canceled ? 'canceled' : 'failed'}: ${outcome.message}`, {
            statusCode: outcome.statusCode || undefined,
            logId,
            retryable: isTransientFailure(outcome.message),
          }),
        );
      } else if (collector.started && !sending) {
        sending = true;
        sendAudio().catch((error: unknown) =>
          fail(new AstUpstreamError('connection', `sending audio failed: ${(error as Error).message}`, { logId, cause: error, retryable: true })),
        );
      }
    });
    ws.on('error', (error) => {
      fail(new AstUpstreamError('connection', `translation upstream connection failed: ${error.message}`, { logId, cause: error, retryable: true }));
    });
    ws.on('close', (code, reason) => {
      const why = reason.length > 0 ? `: ${reason.toString('utf8')}` : '';
      fail(new AstUpstreamError('closed', `upstream closed the connection before the session finished (code ${code}${why})`, { logId, retryable: true }));
    });
  });
}

/** The PCM in FRAME_BYTES frames (the last one shorter), whatever sizes its source reads in. */
async function* frames(pcm: Buffer | PcmSource): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(pcm)) {
    for (let offset = 0; offset < pcm.length; offset += FRAME_BYTES) yield pcm.subarray(offset, offset + FRAME_BYTES);
    return;
  }
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of pcm.open()) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let offset = 0;
    for (; pending.length - offset >= FRAME_BYTES; offset += FRAME_BYTES) yield pending.subarray(offset, offset + FRAME_BYTES);
    pending = pending.subarray(offset);
  }
  if (pending.length > 0) yield pending;
}
