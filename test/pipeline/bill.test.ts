// What a call is billed when its caller leaves (DESIGN §5), as pipeline/bill.ts decides it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Units } from '../../src/billing/prices.js';
import { streamBill, unansweredBill } from '../../src/pipeline/bill.js';
import type { AudioCovered, StreamMeter } from '../../src/pipeline/types.js';

const TOKENS: Units = { input_token: 120, output_token: 4_096 };
const TEXT: Units = { character: 40 };

/** A token stream cut short: no end marker, `output` tokens delivered, `reported` usage if the upstream gave any. */
const tokenMeter = (output: number, reported?: Units): StreamMeter => ({
  completed: false,
  failed: false,
  reported: () => reported,
  delivered: () => ({ output_token: output }),
});
/** An audio stream cut short, its usage due only at the end. */
const audioMeter = (covered: AudioCovered): StreamMeter => ({
  completed: false,
  failed: false,
  reported: () => undefined,
  delivered: () => ({}),
  audioCovered: () => covered,
});

test('a caller who leaves before the upstream answered pays nothing: the hold is released in full', () => {
  assert.deepEqual(unansweredBill({ callerLeft: true, sent: true, begun: undefined, estimate: TOKENS }), {
    kind: 'release',
    reason: 'the caller left before the upstream answered',
  });
});

test('a caller who leaves while the call waits for a connection pays nothing: it was never sent', () => {
  assert.deepEqual(unansweredBill({ callerLeft: true, sent: false, begun: undefined, estimate: TOKENS }), {
    kind: 'release',
    reason: 'the caller left before the call was sent',
  });
});

test('a caller who leaves an audio stream before any audio pays nothing, even once its status line came', () => {
  assert.deepEqual(unansweredBill({ callerLeft: true, sent: true, begun: audioMeter({ kind: 'none' }), estimate: TEXT }), {
    kind: 'release',
    reason: 'the caller left before any audio came',
  });
});

test('a caller who leaves a token stream after its status line, before its first data, pays the prompt, not the output cap', () => {
  assert.deepEqual(unansweredBill({ callerLeft: true, sent: true, begun: tokenMeter(0), estimate: TOKENS }), {
    kind: 'settle',
    units: { input_token: 120 },
    reason: 'the caller left before the first byte',
  });
});

test('a call that failed before its answer, with its caller still there, is released', () => {
  assert.equal(unansweredBill({ callerLeft: false, sent: true, begun: tokenMeter(0), estimate: TOKENS }).kind, 'release');
});

test('a token stream left mid-way is billed the prompt counted plus the output delivered, never the output cap', () => {
  assert.deepEqual(streamBill(tokenMeter(7), { callerLeft: true, estimate: TOKENS }), {
    kind: 'settle',
    units: { input_token: 120, output_token: 7 },
    reason: 'the caller left',
  });
});

test("a token stream left mid-way is billed the upstream's own usage where it gave one", () => {
  const bill = streamBill(tokenMeter(7, { input_token: 99, output_token: 9 }), { callerLeft: true, estimate: TOKENS });
  assert.deepEqual(bill, { kind: 'settle', units: { input_token: 99, output_token: 9 }, reason: 'the caller left' });
});

test('an audio stream left before any audio came is released in full', () => {
  assert.deepEqual(streamBill(audioMeter({ kind: 'none' }), { callerLeft: true, estimate: TEXT }), {
    kind: 'release',
    reason: 'the caller left before any audio came',
  });
});

test('an audio stream left mid-way is billed the units its delivered audio covers', () => {
  const bill = streamBill(audioMeter({ kind: 'measured', units: { character: 12 } }), { callerLeft: true, estimate: TEXT });
  assert.deepEqual(bill, { kind: 'settle', units: { character: 12 }, reason: 'the caller left' });
});

test('an audio stream left mid-way whose cover cannot be measured is billed its estimate, what the whole text costs', () => {
  const bill = streamBill(audioMeter({ kind: 'unmeasured' }), { callerLeft: true, estimate: TEXT });
  assert.deepEqual(bill, { kind: 'settle', units: TEXT, reason: 'the caller left' });
});
