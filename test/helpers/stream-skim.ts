// For tests of a stream meter's skim: what a skim reads from one event's data, and a whole stream
// metered through the SSE tap with the skim and without it, to be compared.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { observeSseJson } from '../../src/upstreams/sse.js';
import type { PieceSink } from '../../src/upstreams/stream-meter.js';

/** What `skim` gave its sink for `data`, or undefined when it left the data to the parse. */
export function skimmedPiece(skim: (bytes: Buffer, from: number, to: number, sink: PieceSink) => boolean, data: string): string | undefined {
  const bytes = Buffer.from(`xx${data}yy`); // offsets inside a larger chunk, as the tap passes them
  let piece = '';
  const sink = { add: (text: string) => void (piece += text), addBytes: (b: Buffer, s: number, e: number) => void (piece += b.toString('utf8', s, e)) };
  return skim(bytes, 2, bytes.length - 2, sink) ? piece : undefined;
}

interface SkimmingMeter {
  observe(event: any): void; // each protocol's meter reads its own event shape
  skim(bytes: Buffer, from: number, to: number): boolean;
  output: { pendingText(): string };
  reported(): unknown;
  completed: boolean;
}

/**
 * `sse` fed byte by byte through the tap to a fresh meter, skimming or not: the bytes out, what the
 * meter counted and reported, and the data of the events it skimmed.
 */
export async function meteredStream(sse: string, meter: SkimmingMeter, skimming: boolean) {
  const skimmed: string[] = [];
  const skim = (bytes: Buffer, from: number, to: number) => {
    const read = meter.skim(bytes, from, to);
    if (read) skimmed.push(bytes.toString('utf8', from, to));
    return read;
  };
  const body = observeSseJson(
    Readable.from([...Buffer.from(sse)].map((byte) => Buffer.of(byte))),
    (event) => void meter.observe(event),
    skimming ? { skim } : {},
  );
  const out = await text(body);
  return { out, output: meter.output.pendingText(), reported: meter.reported(), completed: meter.completed, skimmed };
}

/**
 * `sse` metered by two fresh meters, parsing every event and skimming: both pass it through
 * unchanged and meter it the same. The skimming run's figures, with the data it skimmed.
 */
export async function meteredAlike(sse: string, newMeter: () => SkimmingMeter) {
  const parsed = await meteredStream(sse, newMeter(), false);
  const skimmed = await meteredStream(sse, newMeter(), true);
  assert.equal(skimmed.out, sse);
  assert.equal(parsed.out, sse);
  assert.deepEqual({ ...skimmed, skimmed: [] }, { ...parsed, skimmed: [] });
  return skimmed;
}
