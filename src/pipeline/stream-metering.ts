// A stream's metering from the moment it opens (the pipeline's half of a streamed call): the gate
// that holds its end marker until the hold is settled, the progress a crash would bill from, and
// the one end of its hold however the body ends.

import { priceListId } from '../billing/price-lists.js';
import type { Units } from '../billing/prices.js';
import type { ProgressRecorder } from '../billing/progress.js';
import { withFields } from '../with-fields.js';
import { made, priceUsage, streamBill } from './bill.js';
import { callerLeft } from './caller-left.js';
import { holdEndMarkerForSettle } from './end-marker-gate.js';
import type { HoldEnding, PipelineLogger } from './hold-ending.js';
import type { MeteredRequest, ResolvedModel, StreamAnswer } from './types.js';

/**
 * Meters a stream from the moment it opens: its end marker (and what follows it) waits until
 * the hold is settled (the gate is in place before any chunk is read, first data included).
 * `follow()`, once its first data is in, records its progress and ends the hold when the body
 * ends in any other way.
 */
export function meterStream<Body>(
  progress: ProgressRecorder,
  model: ResolvedModel,
  holdId: string,
  answer: StreamAnswer,
  request: MeteredRequest<Body>,
  estimate: Units,
  ending: HoldEnding,
  log: PipelineLogger,
): { answer: StreamAnswer; follow(): void } {
  let untrack: (() => void) | undefined;
  const endStream = (error?: Error | null) => {
    if (ending.underWay) return ending.underWay;
    untrack?.();
    const left = callerLeft(request.signal);
    const bill = streamBill(answer.meter, { callerLeft: left, estimate });
    if (bill.kind === 'release' && error) log.warn({ err: error, holdId }, 'stream ended early; released');
    return ending.end(bill, bill.kind === 'settle' ? (left ? 'client_gone' : 'ok') : 'interrupted');
  };
  const body = holdEndMarkerForSettle(answer.body, answer.meter, () => endStream());
  const follow = () => {
    if (ending.underWay) return; // ended at its end marker already
    untrack = progress.track(holdId, () => {
      const delivered = answer.meter.delivered();
      if (Object.values(delivered).every((count) => !count)) return undefined; // nothing made yet: a crash releases
      const priced = priceUsage(made(answer.meter, estimate), estimate, model.config);
      return { units: priced.units as Record<string, number>, charge_micros: priced.chargeMicros, price_id: priceListId(model.config.price) };
    });
    // 'close' comes once, however the body ends (ended, failed, or destroyed when the caller left):
    // one listener, where finished() would add a watcher of five.
    // (its end's failure is the store's, kept and logged by the settlements: nothing to tell here)
    body.once('close', () => {
      endStream(body.errored ?? (body.readableEnded ? undefined : new Error('the stream closed before its end'))).catch(() => {});
    });
  };
  return { answer: withFields(answer, { body }), follow };
}
