// The synchronous endpoint families (the chat-like ones are in chat-families.ts): how each is called, what it answers to each fault, and what a
// caller that leaves is billed. The rules are DESIGN §5's; each family says only where it differs.
import assert from 'node:assert/strict';
import { FormData } from 'undici';
import type { TestGateway } from '../../helpers/gateway.js';
import { makeWav } from '../../helpers/wav.js';
import {
  addFault,
  callAndWait,
  leaveAfterFirstChunk,
  leaveWhileUpstreamWorks,
  lineEvents,
  postForm,
  postJson,
  type Send,
  type StreamEvent,
  sseEvents,
  type WholeAnswer,
} from './calls.js';
import { BEHAVIOUR, type CellContext, type Family, type Fault, type MoneyRule, RELEASED, TIMING } from './matrix.js';
import { chargeOf } from './money.js';

const SPEECH_TEXT = 'One. Two. Three. Four. Five. Six.';
const UPSTREAM_FAILED = { status: 502, body: { error: 'upstream provider error', type: 'server_error' } };
const ONE_PIECE = 'answered in one piece: there is no stream to break';

/** The protocol's error event, and how a stream reads as events. */
const PROTOCOLS = {
  chat: { events: sseEvents, isError: (e: StreamEvent) => typeof e.data === 'object' && e.data !== null && 'error' in e.data },
  messages: { events: sseEvents, isError: (e: StreamEvent) => e.event === 'error' },
  // the upstream's own error is followed by response.failed, its terminal event
  responses: { events: sseEvents, isError: (e: StreamEvent) => e.event === 'error', trailer: 'response.failed' },
  // the Gemini API's SSE: an `error` object as the last event
  gemini: { events: sseEvents, isError: (e: StreamEvent) => typeof e.data === 'object' && e.data !== null && 'error' in e.data },
  speech: { events: lineEvents, isError: (e: StreamEvent) => e.data?.code === 55_000_000 },
  /** Audio has no error event: a broken stream is cut. */
  audio: undefined,
} as const;
type Protocol = keyof typeof PROTOCOLS;

interface SyncSpec {
  name: string;
  /** The sandbox kind of its upstream calls (the fault rule's selector). */
  kind: string;
  send(gw: TestGateway): (key: string) => Send;
  /** Streams only: how the stream ends when it breaks. */
  protocol?: Protocol;
  /** Stream faults that reach the gateway before anything went to the caller: a 502, not a 200 cut short. */
  failsBeforeFirstByte?: Fault[];
  /**
   * What a stream the caller left after its output began is billed (`first`: what the caller read);
   * before the upstream's first byte it pays nothing.
   */
  leftBill?(units: Record<string, number>, first: string): void;
  /** How much the caller that leaves mid-stream reads first (an audio stream: past its header pages). */
  leavesAfterBytes?: number;
  /**
   * The upstream's 400, as the caller gets it: a refusal of the caller's input is theirs (400), but
   * AST refuses only the WebSocket upgrade, which carries the gateway's credentials and none of the
   * caller's input (that goes in the session's first frame): a 502 like a 401 or 403.
   */
  refusal?: 'invalid_request' | 'upstream_failed';
  behaviour?: Partial<Record<Fault, Record<string, unknown>>>;
  /** A one-piece answer whose upstream is itself a stream of frames (AST): drops and error events apply to it. */
  framedUpstream?: boolean;
  /** The gateway writes the stream itself (a translation): even the upstream's error event reaches the caller as the gateway's. */
  translated?: boolean;
}

/** Where the fault falls for the caller: before any byte, on the first chunk (a malformed stream), or mid-stream. */
type Phase = 'before' | 'first' | 'mid';
function phaseOf(spec: SyncSpec, fault: Fault): Phase {
  if (!spec.protocol || ['4xx', '5xx', '429', 'hang', 'reset'].includes(fault) || spec.failsBeforeFirstByte?.includes(fault)) return 'before';
  return fault === 'malformed' ? 'first' : 'mid';
}

function checkAnswer(spec: SyncSpec, fault: Fault, phase: Phase, answer: WholeAnswer): void {
  const seen = `${spec.name}: answered ${answer.status} ${answer.text.slice(0, 300)}`;
  if (phase === 'before') {
    const body = answer.text ? JSON.parse(answer.text) : undefined;
    if (fault === '4xx' && spec.refusal !== 'upstream_failed') {
      assert.equal(answer.status, 400, seen);
      assert.equal(body.type, 'invalid_request_error', seen);
      assert.match(body.error, /^upstream refused the request/, seen);
    } else assert.deepEqual({ status: answer.status, body }, UPSTREAM_FAILED, seen);
    return;
  }
  assert.equal(answer.status, 200, seen);
  const protocol = PROTOCOLS[spec.protocol!];
  if (!protocol) {
    assert.ok(
      answer.cut && answer.bytes > 0,
      `${spec.name}: expected audio cut short (no error event to end it with); ${answer.bytes} bytes, cut: ${answer.cut}`,
    );
    return;
  }
  assert.equal(answer.cut, false, `${spec.name}: the stream was cut rather than ended with its error event`);
  const events = protocol.events(answer.text);
  const trailer = 'trailer' in protocol ? protocol.trailer : undefined;
  const last = [...events].reverse().find((e) => trailer === undefined || e.event !== trailer);
  const errors = events.filter(protocol.isError);
  assert.ok(events.length >= 2, `${spec.name}: something went out before the error: ${answer.text.slice(0, 300)}`);
  assert.ok(last && protocol.isError(last), `${spec.name}: the stream does not end with its error event: ${answer.text.slice(-300)}`);
  assert.equal(errors.length, 1, `${spec.name}: one error event, not ${errors.length}`);
  // a drop or a broken stream is ended by the gateway's own event; an upstream error event goes out as it came
  const ownError = fault !== 'error' || spec.translated === true;
  assert.match(JSON.stringify(errors[0]!.data), ownError ? /upstream provider error/ : /sandbox fault/, seen);
}

async function runSync(spec: SyncSpec, { gw, key, fault, caller }: CellContext, prepared: Record<string, string>): Promise<MoneyRule> {
  const send = spec.send(gw)(key);
  const phase = phaseOf(spec, fault);
  const rule: Record<string, unknown> = { kind: spec.kind, times: 1, ...BEHAVIOUR[fault], ...spec.behaviour?.[fault] };
  if (caller === 'leaves' && phase === 'before' && fault !== 'hang') rule.delay_ms = TIMING.leaveDelayMs;
  if (caller === 'leaves' && phase === 'mid') rule.chunk_delay_ms = TIMING.chunkDelayMs;
  await addFault(gw, rule);

  if (caller === 'waits') {
    checkAnswer(spec, fault, phase, await callAndWait(send));
    return RELEASED; // the upstream failed: the caller pays nothing
  }
  if (!spec.protocol) {
    // answered in one piece: the call runs on to its end without the caller, and the upstream fails there
    await leaveWhileUpstreamWorks(gw, send, { kind: spec.kind });
    return RELEASED;
  }
  if (phase === 'before') {
    // the stream stops when the caller leaves, before the upstream's fault (or during its hang): the
    // upstream had sent nothing, made nothing, and the hold is released in full (DESIGN §5)
    await leaveWhileUpstreamWorks(gw, send, { kind: spec.kind });
    return RELEASED;
  }
  const { first } = await leaveAfterFirstChunk(send, { minBytes: spec.leavesAfterBytes });
  // a malformed stream failed with its first chunk: the upstream failed before the caller left
  if (phase === 'first') return RELEASED;
  // billed for what was delivered, and never more than the same call cost completed (prepared)
  return { kind: 'settle', check: (units) => spec.leftBill!(units, first), atMostMicros: Number(prepared.completedMicros) };
}

/** A stream left mid-way is compared with the same call completed: made first, without a fault. */
async function prepareSync(spec: SyncSpec, { gw, accountId, key, fault, caller }: CellContext): Promise<Record<string, string>> {
  if (caller !== 'leaves' || !spec.protocol || phaseOf(spec, fault) !== 'mid') return {};
  const send = spec.send(gw)(key);
  const completedMicros = await chargeOf(gw, accountId, async () => {
    const answer = await callAndWait(send);
    assert.equal(answer.status, 200, `${spec.name}: the completed call answered ${answer.status} ${answer.text.slice(0, 300)}`);
  });
  return { completedMicros: String(completedMicros) };
}

export const syncFamily = (spec: SyncSpec): Family => ({
  name: spec.name,
  notApplicable: (fault) => (!spec.protocol && !spec.framedUpstream && (fault === 'drop' || fault === 'error') ? ONE_PIECE : undefined),
  prepare: (ctx) => prepareSync(spec, ctx),
  run: (ctx, prepared) => runSync(spec, ctx, prepared),
  slow: (fault) => fault === 'hang',
});

/** Speech without subtitles: what its audio covered cannot be measured, so the text is billed, what the whole call costs. */
const textLeft = (characters: number) => (units: Record<string, number>) => assert.deepEqual(units, { character: characters });
/**
 * Translated speech: the source covered by the speech delivered (at least its first second, at most
 * all of it, at 25 tokens a second) and as much of the translated words, never the hold's estimate.
 */
const coveredLeft = (sourceMs: number, translatedWords: number) => (units: Record<string, number>) => {
  const input = units.input_token ?? 0;
  const output = units.output_token ?? 0;
  assert.ok(input >= 25 && input <= Math.ceil(sourceMs / 40), `billed ${JSON.stringify(units)}`);
  assert.ok(output >= 0 && output <= translatedWords, `billed ${JSON.stringify(units)}`);
};

const translation = (mode: 's2t' | 's2s', ms: number) => (gw: TestGateway) =>
  postForm(gw, '/v1/audio/translations', () => {
    const form = new FormData();
    form.append('model', 'sandbox-ast');
    form.append('mode', mode);
    form.append('file', new Blob([new Uint8Array(makeWav({ ms }))], { type: 'audio/wav' }), 'speech.wav');
    return form;
  });
/** AST frames before the first audio: SessionStarted, two source and two translation subtitles. */
const AST_FRAMES_BEFORE_AUDIO = 5;
const S2S_MS = 3_000;
/** The subtitles, OpusHead, OpusTags, and three pages of a second of speech each. */
const S2S_FAULT_AFTER_FRAMES = AST_FRAMES_BEFORE_AUDIO + 5;

export const SYNC_FAMILIES: Family[] = [
  syncFamily({
    name: 'speech, line stream',
    kind: 'speech',
    protocol: 'speech',
    leftBill: textLeft([...SPEECH_TEXT].length),
    send: (gw) =>
      postJson(gw, '/v1/audio/speech/unidirectional?model=sandbox-tts', { req_params: { text: SPEECH_TEXT, speaker: 'zh_female_vv_uranus_bigtts' } }),
  }),
  syncFamily({
    name: 'speech, OpenAI audio',
    kind: 'speech',
    protocol: 'audio',
    leftBill: textLeft([...SPEECH_TEXT].length),
    // the audio is decoded from the lines: a broken first line fails the call before any audio
    failsBeforeFirstByte: ['malformed'],
    send: (gw) => postJson(gw, '/v1/audio/speech', { model: 'sandbox-tts', input: SPEECH_TEXT, voice: 'alloy' }),
  }),
  syncFamily({ name: 'search', kind: 'search', send: (gw) => postJson(gw, '/v1/search', { Type: 'web', Query: 'fault matrix' }) }),
  syncFamily({
    // its upstream is a WebSocket of frames even when the caller's answer is one JSON: drops and errors apply
    name: 'speech translation, s2t',
    kind: 'ast',
    send: translation('s2t', 1_000),
    framedUpstream: true,
    refusal: 'upstream_failed',
  }),
  syncFamily({
    name: 'speech translation, s2s',
    kind: 'ast',
    protocol: 'audio',
    send: translation('s2s', S2S_MS),
    refusal: 'upstream_failed',
    // the sandbox's translation of 3 s: "[en] translated speech of 3000 ms", six words
    leftBill: coveredLeft(S2S_MS, 6),
    // past the Ogg header pages, into the first second of speech
    leavesAfterBytes: 1_000,
    // the broken frame is the session's first: no audio was made
    failsBeforeFirstByte: ['malformed'],
    // past the subtitles and the Ogg header pages into the speech, a second a page, so speech reached the
    // caller (and a caller leaving left after its first second) before the fault on the third
    behaviour: { drop: { drop_after_chunks: S2S_FAULT_AFTER_FRAMES }, error: { error_after_chunks: S2S_FAULT_AFTER_FRAMES } },
  }),
];
