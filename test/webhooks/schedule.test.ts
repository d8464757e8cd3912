// The delivery schedule measured on real sockets: receivers that hang use only their own slots
// and everyone else's attempts start within 1 s of their due time; a deliverer stopped
// mid-schedule and a new one on the same store make each attempt once, on time.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { verifyWebhook } from '../../src/index.js';
import { openStore, type Store } from '../../src/store/open.js';
import { enqueueWebhook, findWebhook, type WebhookRow } from '../../src/store/webhook-outbox.js';
import { createWebhookDeliverer, type WebhookDelivererOptions, type WebhookLog } from '../../src/webhooks/deliverer.js';
import { type Received, type Receiver, startReceiver } from './receiver.js';

// The requirement: an attempt starts within 1 s of its due time (measured on arrival, later still).
const LATE_LIMIT_MS = 1_000;
const quiet: WebhookLog = { info() {}, warn() {}, error() {} };

// Polls to a deadline; reads of the store poll slowly, so the test's own queries do not queue
// ahead of the deliverer's on the one SQLite connection and delay what it measures.
async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs: number, everyMs = 5): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

const arrivalsOf = (receiver: Receiver, eventId: string): Received[] => receiver.received.filter((r) => r.headers['x-service-event-id'] === eventId);
const summary = (values: number[]) => `max ${Math.max(...values)}, median ${[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]}`;

describe('webhook schedule', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollroute-webhook-schedule-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  let storeUrl: string;
  let store: Store;
  let receivers: Receiver[];
  const receiver = async (fallback: Receiver['fallback']) => {
    const started = await startReceiver();
    started.fallback = fallback;
    receivers.push(started);
    return started;
  };
  const deliverer = (options: Pick<WebhookDelivererOptions, 'retryDelaysMs' | 'timeoutMs'> & Partial<WebhookDelivererOptions>) =>
    createWebhookDeliverer({ store, allowPrivate: true, log: quiet, ...options });
  const enqueue = (accountId: string, eventId: string, url: string, dueAt = Date.now()) =>
    enqueueWebhook(store.db, { accountId, taskId: `task_${eventId}`, eventId, url, payload: JSON.stringify({ task_id: `task_${eventId}` }), now: dueAt });

  beforeEach(async () => {
    // a file, so a restarted deliverer can reopen it as a new process would
    storeUrl = `sqlite:${join(dir, `schedule-${++n}.db`)}`;
    store = await openStore(storeUrl);
    receivers = [];
  });
  afterEach(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await store.close();
  });

  test("three receivers hanging on 60 callbacks each use only their own slots; another account's first attempts and retries start within 1 s of their due time", async (t) => {
    // a good receiver's answer must never time out on a loaded machine; the tarpits hang past it
    const timeoutMs = 2_000;
    const retryDelaysMs = [1_000, 2_000, 4_000];
    const tarpits = [await receiver('hang'), await receiver('hang'), await receiver('hang')];
    const seen = new Set<string>();
    const good = await receiver((res, request) => {
      // each event's first attempt fails, so it has a retry due 1 s after that failure
      const eventId = String(request.headers['x-service-event-id']);
      res.writeHead(seen.has(eventId) ? 204 : 500).end();
      seen.add(eventId);
    });
    const attacker = await createAccount(store, { name: 'tarpits' });
    const victim = await createAccount(store, { name: 'good' });
    for (const [i, tarpit] of tarpits.entries()) {
      for (let k = 0; k < 60; k++) await enqueue(attacker.id, `evt_tarpit_${i}_${k}`, tarpit.url(`/tarpit/${k}`));
    }
    const d = deliverer({ timeoutMs, retryDelaysMs, perReceiverConcurrency: 4, maxInFlight: 64 });
    d.start();
    try {
      // every tarpit slot hangs, and has timed out once: their backlog is being worked through
      await until(
        () => tarpits.map((r) => [r.received.length, r.open()]),
        (state) => state.every(([count, open]) => count! > 4 && open === 4),
        10_000,
        20,
      );
      // due over the next 2.5 s, while the tarpits' slots hang and time out, and over 150 of their callbacks wait
      // (the process's own stalls are reported too: on a starved machine they, not the schedule, add lateness)
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      const start = Date.now();
      const events: WebhookRow[] = [];
      for (let k = 0; k < 10; k++) events.push(await enqueue(victim.id, `evt_good_${k}`, good.url(), start + k * 250));
      await until(
        () => good.received.length,
        (count) => count >= 2 * events.length,
        15_000,
        20,
      );
      const final = await until(
        () => Promise.all(events.map((e) => findWebhook(store.db, e.id))),
        (rows) => rows.every((r) => r?.state !== 'pending'),
        5_000,
        50,
      );
      const firstLate: number[] = [];
      const retryLate: number[] = [];
      for (const row of final) {
        const [first, retry] = arrivalsOf(good, row!.event_id);
        firstLate.push(first!.arrivedAtEpochMs - row!.created_at);
        // next_attempt_at still holds the retry's due time: the first failure + the first delay
        retryLate.push(retry!.arrivedAtEpochMs - row!.next_attempt_at);
      }
      loopDelay.disable();
      const stalls = `event loop delay max ${Math.round(loopDelay.max / 1e6)} ms, p99 ${Math.round(loopDelay.percentile(99) / 1e6)} ms`;
      t.diagnostic(`good receiver lateness after due time (ms): first attempts ${summary(firstLate)}; retries ${summary(retryLate)}; ${stalls}`);
      assert.deepEqual(
        final.map((r) => [r!.state, r!.attempts]),
        events.map(() => ['delivered', 2]),
      );
      const late = [...firstLate, ...retryLate].filter((ms) => ms > LATE_LIMIT_MS || ms < 0);
      assert.deepEqual(late, [], `first attempts ${firstLate}, retries ${retryLate}; ${stalls}`);
      // the tarpits hung on their four slots throughout and still had callbacks waiting
      assert.deepEqual(
        tarpits.map((r) => r.peakOpen()),
        [4, 4, 4],
      );
      assert.ok(
        tarpits.every((r) => r.received.length < 60),
        `tarpit attempts: ${tarpits.map((r) => r.received.length)}`,
      );
    } finally {
      await d.stop();
    }
  });

  test("one account's hanging callbacks to a receiver do not delay another account's callbacks to the same receiver", async () => {
    // one origin (a platform both accounts point at): account A's paths hang, account B's answer at once
    const platform = await receiver((res, request) => {
      if (request.path.startsWith('/slow/')) return; // never answered: the deliverer times out
      res.writeHead(204).end();
    });
    const slow = await createAccount(store, { name: 'slow' });
    const prompt = await createAccount(store, { name: 'prompt' });
    for (let k = 0; k < 40; k++) await enqueue(slow.id, `evt_slow_${k}`, platform.url(`/slow/${k}`));
    const d = deliverer({ timeoutMs: 5_000, retryDelaysMs: [60_000], perReceiverConcurrency: 4, maxInFlight: 64 });
    d.start();
    try {
      await until(
        () => platform.open(),
        (open) => open === 4,
        5_000,
        20,
      );
      const events: WebhookRow[] = [];
      for (let k = 0; k < 5; k++) events.push(await enqueue(prompt.id, `evt_prompt_${k}`, platform.url(`/prompt/${k}`)));
      await until(
        () => events.every((e) => arrivalsOf(platform, e.event_id).length > 0),
        (all) => all,
        4_000,
        20,
      );
      const late = events.map((e) => arrivalsOf(platform, e.event_id)[0]!.arrivedAtEpochMs - e.created_at);
      assert.deepEqual(
        late.filter((ms) => ms > LATE_LIMIT_MS),
        [],
        `lateness ${late} ms`,
      );
      assert.equal(
        platform.received.filter((r) => r.path.startsWith('/slow/')).length,
        4,
        "the slow account's backlog stayed in the store, behind its own four slots",
      );
    } finally {
      await d.stop();
    }
  });

  test('max_in_flight bounds the attempts in flight over all receivers, shared out evenly between hanging ones', async () => {
    const tarpits = [await receiver('hang'), await receiver('hang'), await receiver('hang')];
    const { id: accountId } = await createAccount(store, { name: 'tarpits' });
    for (const [i, tarpit] of tarpits.entries()) {
      for (let k = 0; k < 20; k++) await enqueue(accountId, `evt_${i}_${k}`, tarpit.url());
    }
    const d = deliverer({ timeoutMs: 300, retryDelaysMs: [60_000], perReceiverConcurrency: 4, maxInFlight: 6 });
    let peakTotal = 0;
    d.start();
    try {
      // three rounds of timeouts
      await until(
        () => {
          peakTotal = Math.max(
            peakTotal,
            tarpits.reduce((sum, r) => sum + r.open(), 0),
          );
          return tarpits.map((r) => r.received.length);
        },
        (counts) => counts.every((c) => c >= 6),
        5_000,
      );
    } finally {
      await d.stop();
    }
    assert.deepEqual({ peakTotal, peaks: tarpits.map((r) => r.peakOpen()) }, { peakTotal: 6, peaks: [2, 2, 2] });
  });

  test("a deliverer stopped mid-schedule and a new one on the reopened store make each event's four attempts once, each within 1 s of its due time", async (t) => {
    const answerMs = 150;
    const retryDelaysMs = [300, 600, 900];
    const failing = await receiver((res) => setTimeout(() => res.writeHead(500).end(), answerMs));
    const account = await createAccount(store, { name: 'hooks' });
    const start = Date.now();
    const events: WebhookRow[] = [];
    for (let k = 0; k < 6; k++) events.push(await enqueue(account.id, `evt_${k}`, failing.url(), start + k * 100));

    const first = deliverer({ timeoutMs: 2_000, retryDelaysMs });
    first.start();
    // mid-schedule, with attempts in flight: stop waits for them to be answered and recorded
    await until(
      () => [failing.received.length, failing.open()],
      ([count, open]) => count! >= 9 && open! > 0,
      5_000,
    );
    await first.stop();
    const stoppedAt = Date.now();
    const sentBeforeStop = failing.received.length;
    assert.equal(failing.open(), 0, 'stop returned with an attempt still in flight');
    await store.close();

    store = await openStore(storeUrl);
    const second = deliverer({ timeoutMs: 2_000, retryDelaysMs });
    second.start();
    t.diagnostic(`stopped after ${sentBeforeStop} of 24 attempts; restarted ${Date.now() - stoppedAt} ms later`);
    try {
      await until(
        () => failing.received.length,
        (count) => count >= 4 * events.length,
        10_000,
        20,
      );
      const final = await until(
        () => Promise.all(events.map((e) => findWebhook(store.db, e.id))),
        (rows) => rows.every((r) => r?.state === 'dropped'),
        5_000,
        50,
      );
      assert.deepEqual(
        final.map((r) => r!.attempts),
        [4, 4, 4, 4, 4, 4],
      );
    } finally {
      await second.stop();
    }
    const late: number[] = [];
    for (const event of events) {
      const arrivals = arrivalsOf(failing, event.event_id);
      assert.equal(arrivals.length, 4, `${event.event_id}: ${arrivals.length} attempts arrived`);
      assert.ok(arrivals.every((r) => verifyWebhook(account.webhook_secret, r.headers, r.rawBody)));
      late.push(arrivals[0]!.arrivedAtEpochMs - event.created_at);
      for (let k = 1; k < 4; k++) {
        // due `delay` after the previous attempt ended, which was at least answerMs after it arrived
        const earliestDue = arrivals[k - 1]!.arrivedAtEpochMs + answerMs + retryDelaysMs[k - 1]!;
        const lateMs = arrivals[k]!.arrivedAtEpochMs - earliestDue;
        assert.ok(lateMs >= -5, `${event.event_id} attempt ${k + 1} came ${-lateMs} ms before its due time`);
        late.push(lateMs);
      }
    }
    t.diagnostic(`lateness after due time across the restart (ms, at most): ${summary(late)}`);
    assert.deepEqual(
      late.filter((ms) => ms > LATE_LIMIT_MS),
      [],
    );
  });
});
