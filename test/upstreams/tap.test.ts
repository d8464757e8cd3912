// The pass-through tap and the end-marker gate: chunks go on as they arrive, the one that completes
// the stream waits for the settle, and an upstream that breaks or a caller that leaves ends both sides.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import { test } from 'node:test';
import { holdEndMarkerForSettle } from '../../src/pipeline/end-marker-gate.js';
import type { StreamMeter } from '../../src/pipeline/types.js';
import { observeNdjson } from '../../src/upstreams/ndjson.js';
import { observeSseJson } from '../../src/upstreams/sse.js';
import { PassThroughTap } from '../../src/upstreams/tap.js';
import { pendingSettle } from './pending-settle.js';

/** An SSE body fed by hand, read through the tap with a meter that completes at `[DONE]`. */
function sseThroughTap() {
  const upstream = new PassThrough();
  const meter = { completed: false, failed: false, delivered: () => ({}), reported: () => undefined } as unknown as StreamMeter & { completed: boolean };
  const body = observeSseJson(upstream, () => undefined, { onDone: () => Object.assign(meter, { completed: true }) });
  const received: string[] = [];
  return { upstream, meter, body, received };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** An SSE tap behind the end-marker gate, with a settle the test lands by hand, and what the caller received. */
function gatedSseTap() {
  const { upstream, meter, body, received } = sseThroughTap();
  const settlement = pendingSettle();
  const gated = holdEndMarkerForSettle(body, meter, settlement.settle);
  gated.on('data', (chunk) => received.push(String(chunk)));
  return { upstream, settlement, received };
}

test("the gateway's own tap is gated in place: no second stream stage is added", () => {
  const { body, meter } = sseThroughTap();
  assert.ok(body instanceof PassThroughTap);
  assert.equal(
    holdEndMarkerForSettle(body, meter, async () => {}),
    body,
  );
});

test('chunks before the end marker go on at once; the end marker waits for the settle to land', async () => {
  const { upstream, settlement, received } = gatedSseTap();

  upstream.write('data: {"n":1}\n\n');
  await tick();
  assert.deepEqual(received, ['data: {"n":1}\n\n']);
  assert.equal(settlement.asked(), 0);

  upstream.write('data: [DONE]\n\n');
  await tick();
  assert.deepEqual(received, ['data: {"n":1}\n\n'], 'the end marker is held while the settle is outstanding');
  assert.equal(settlement.asked(), 1);

  settlement.land();
  await tick();
  assert.deepEqual(received, ['data: {"n":1}\n\n', 'data: [DONE]\n\n']);
});

test('a chunk that carries the end marker sends its events before the marker at once; the marker waits for the settle', async () => {
  const { upstream, settlement, received } = gatedSseTap();

  upstream.write('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
  await tick();
  assert.deepEqual(received, ['data: {"n":1}\n\ndata: {"n":2}\n\n'], 'the events before the end marker are not held for the settle');
  assert.equal(settlement.asked(), 1);

  settlement.land();
  await tick();
  assert.deepEqual(received, ['data: {"n":1}\n\ndata: {"n":2}\n\n', 'data: [DONE]\n\n']);
});

test('a chunk cut at its end marker keeps multi-byte characters whole on both sides', async () => {
  const { upstream, settlement, received } = gatedSseTap();
  const text = 'data: {"text":"naïve 日本語 ✓"}\n\ndata: [DONE]\n\n';
  upstream.write(Buffer.from(text));
  await tick();
  settlement.land();
  await tick();
  // Each part decoded alone: a cut inside a character would leave a replacement character in both.
  assert.deepEqual(received, ['data: {"text":"naïve 日本語 ✓"}\n\n', 'data: [DONE]\n\n']);
});

test('a chunk whose events are renamed or kept back is still cut exactly at its end marker', async () => {
  const upstream = new PassThrough();
  const meter = { completed: false } as StreamMeter & { completed: boolean };
  const keep = (event: { drop?: boolean }) => (event.drop ? false : undefined);
  const body = observeSseJson(upstream, keep, {
    modelAlias: { upstream: 'up', public: 'modèle-public' },
    onDone: () => Object.assign(meter, { completed: true }),
  });
  const settlement = pendingSettle();
  const received: string[] = [];
  holdEndMarkerForSettle(body, meter, settlement.settle).on('data', (chunk) => received.push(String(chunk)));

  upstream.write(Buffer.from('data: {"model":"up","text":"日本語"}\n\ndata: {"drop":true}\n\ndata: {"text":"✓"}\n\ndata: [DONE]\n\n'));
  await tick();
  // The new names are longer in bytes than in characters: a cut counted in characters would fall inside the kept events.
  assert.deepEqual(received, ['data: {"model":"modèle-public","text":"日本語"}\n\ndata: {"text":"✓"}\n\n']);
  settlement.land();
  await tick();
  assert.deepEqual(received.slice(1), ['data: [DONE]\n\n']);
});

test('an NDJSON chunk is cut at the line that completes the stream, in bytes', async () => {
  const upstream = new PassThrough();
  const meter = { completed: false } as StreamMeter & { completed: boolean };
  const body = observeNdjson(upstream, (value) => {
    if ((value as { done?: boolean }).done) meter.completed = true;
  });
  const settlement = pendingSettle();
  const gated = holdEndMarkerForSettle(body, meter, settlement.settle);
  assert.equal(gated, body);
  const received: string[] = [];
  gated.on('data', (chunk) => received.push(String(chunk)));

  upstream.write(Buffer.from('{"audio":"é"}\n{"done":true}\n'));
  await tick();
  assert.deepEqual(received, ['{"audio":"é"}\n']);
  settlement.land();
  await tick();
  assert.deepEqual(received, ['{"audio":"é"}\n', '{"done":true}\n']);
});

test('a body of another kind gets a gate stage of its own, with the same rule', async () => {
  const meter = { completed: false } as StreamMeter & { completed: boolean };
  const source = new PassThrough();
  const settlement = pendingSettle();
  const gated = holdEndMarkerForSettle(source, meter, settlement.settle);
  assert.notEqual(gated, source);
  const received: string[] = [];
  gated.on('data', (chunk) => received.push(String(chunk)));
  source.write('audio-1');
  await tick();
  meter.completed = true;
  source.write('audio-2 and the end');
  await tick();
  assert.deepEqual(received, ['audio-1']);
  settlement.land();
  await tick();
  assert.deepEqual(received, ['audio-1', 'audio-2 and the end']);
});

test('an upstream body that fails fails the tap with its error', async () => {
  const { upstream, body } = sseThroughTap();
  body.resume();
  const failed = once(body, 'error');
  upstream.destroy(new Error('upstream socket reset'));
  const [error] = await failed;
  assert.equal((error as Error).message, 'upstream socket reset');
});

test('an upstream body that closes without its end or an error breaks the tap', async () => {
  const { upstream, body } = sseThroughTap();
  body.resume();
  const failed = once(body, 'error');
  upstream.destroy();
  const [error] = await failed;
  assert.match((error as Error).message, /closed before its end/);
});

test('a caller that leaves (the tap destroyed) destroys the upstream body', async () => {
  const { upstream, body } = sseThroughTap();
  body.resume();
  upstream.write('data: {"n":1}\n\n');
  await tick();
  body.destroy();
  await once(upstream, 'close');
  assert.equal(upstream.destroyed, true);
});

test('a whole upstream body ends the tap with everything forwarded, an unterminated last event included', async () => {
  const upstream = Readable.from([Buffer.from('data: {"n":1}\n\n'), Buffer.from('data: [DONE]')]);
  const body = observeSseJson(upstream, () => undefined);
  const chunks: string[] = [];
  for await (const chunk of body) chunks.push(String(chunk));
  assert.equal(chunks.join(''), 'data: {"n":1}\n\ndata: [DONE]\n\n');
  assert.equal(upstream.destroyed, true);
});

test('a tap takes one gate only', () => {
  const tap = new PassThroughTap(() => undefined);
  const gate = { due: () => false, wait: async () => {} };
  tap.gateForwarding(gate);
  assert.throws(() => tap.gateForwarding(gate), /already has a gate/);
});

/** A tap whose step passes each chunk on as text: what each step read, and what the caller received. */
function recordingTap() {
  const steps: string[] = [];
  const tap = new PassThroughTap((chunk) => {
    if (chunk) steps.push(String(chunk));
    return chunk && String(chunk);
  });
  const received: string[] = [];
  tap.on('data', (chunk) => received.push(String(chunk)));
  return { tap, steps, received };
}

test('the chunks that come with the first output wait one turn, so the first can reach the caller before they are read', async () => {
  const { tap, steps, received } = recordingTap();

  for (const event of ['one', 'two', 'three']) tap.write(event); // as one socket read hands them over
  assert.deepEqual(steps, ['one'], 'only the first chunk is read in the turn it came in');
  await new Promise((resolve) => process.nextTick(resolve));
  assert.deepEqual(received, ['one'], 'the first output is readable before the others are read');

  await tick();
  assert.deepEqual(steps, ['one', 'twothree'], 'the two that waited are read as one');
  assert.deepEqual(received, ['one', 'twothree']);
});

test('chunks that arrive while the tap reads the one before are read in one pass and go on as one write', async () => {
  const { tap, steps, received } = recordingTap();
  tap.write('first');
  await tick();

  for (const event of ['a', 'b', 'c', 'd']) tap.write(event); // one socket read's chunks, handed over in one go
  assert.deepEqual(steps, ['first', 'a'], 'the first of them is read at once');
  assert.deepEqual(received, ['first', 'a'], 'and goes on at once');
  await Promise.resolve();
  assert.deepEqual(steps, ['first', 'a', 'bcd'], 'the rest, queued behind it, in one pass before the turn ends');
  assert.deepEqual(received, ['first', 'a', 'bcd']);
});

test('a burst of events read in one pass reaches the caller byte for byte, and each event is observed', async () => {
  const upstream = new PassThrough();
  const seen: number[] = [];
  const body = observeSseJson(upstream, (value) => {
    seen.push((value as { n: number }).n);
    return undefined;
  });
  const received: Buffer[] = [];
  body.on('data', (chunk) => received.push(Buffer.from(chunk)));
  const events = Array.from({ length: 50 }, (_, n) => `data: {"n":${n},"text":"é"}\n\n`);
  const bytes = Buffer.from(events.join(''));
  // Cut at odd places (inside a character too), all handed over in one turn.
  for (let at = 0; at < bytes.length; at += 37) upstream.write(bytes.subarray(at, at + 37));
  upstream.end();
  await once(body, 'end');
  assert.equal(Buffer.concat(received).toString(), events.join(''));
  assert.deepEqual(
    seen,
    events.map((_, n) => n),
  );
  assert.ok(received.length <= 3, `the burst went on in a few writes, not one per chunk (${received.length})`);
});
