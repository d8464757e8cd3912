// The background loop that sends the outbox's webhooks (spec §6.1, DESIGN §5): claim due rows
// under a lease, POST each one signed at its own send time with the account's current secret,
// then record delivered, retry at the next delay of the schedule, or dropped. All state is in
// the rows, so several instances can run this loop on one database, and a restart resumes.
import { safeRequest } from '../net/safe-request.js';
import { findAccount } from '../store/accounts.js';
import type { Store } from '../store/open.js';
import { claimDueWebhooks, type DeliveryOutcome, recordDeliveryAttempt, type WebhookRow } from '../store/webhook-outbox.js';
import { signWebhook, WEBHOOK_HEADERS } from './sign.js';

/** What the deliverer logs with; a pino logger fits. */
export interface WebhookLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface WebhookDelivererOptions {
  store: Store;
  /** Delay after failed attempt n (1-based) is retryDelaysMs[n-1]; 1 + length attempts in all. */
  retryDelaysMs: readonly number[];
  /** A receiver must answer 2xx within this (spec: 10 s). */
  timeoutMs: number;
  allowPrivate: boolean;
  log: WebhookLog;
  now?: () => number;
  pollIntervalMs?: number;
  /** Rows claimed, and sent concurrently, per pass. */
  batchSize?: number;
}

export interface WebhookDeliverer {
  start(): void;
  /** Stops the loop and waits for a pass in flight (at most about timeoutMs). */
  stop(): Promise<void>;
  /** One pass: claims due rows and makes one attempt on each. Returns how many were attempted. */
  deliverDue(): Promise<number>;
}

const USER_AGENT = 'tollroute-webhooks';
const LAST_ERROR_LIMIT = 500;
// Only the status matters; a receiver's long answer is not read.
const RESPONSE_BYTES_READ = 1024;

export function createWebhookDeliverer({
  store, retryDelaysMs, timeoutMs, allowPrivate, log, now = Date.now, pollIntervalMs = 1_000, batchSize = 20,
}: WebhookDelivererOptions): WebhookDeliverer {
  const maxAttempts = 1 + retryDelaysMs.length;
  // A lease outlives every attempt of its batch (sent concurrently, each bounded by timeoutMs),
  // with room for the database writes; only a crashed instance's rows wait for it to expire.
  const leaseMs = timeoutMs + 30_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined; // the loop's pass in flight
  let stopped = true;

  async function deliverDue(): Promise<number> {
    const rows = await claimDueWebhooks(store.db, { now: now(), leaseMs, limit: batchSize, dialect: store.dialect });
    // Settled, not all: one row's database error must not leave the others' outcomes unlogged.
    const results = await Promise.allSettled(rows.map((row) => deliverOne(row)));
    results.forEach((result, i) => {
      if (result.status === 'rejected') {
        const reason = result.reason instanceof Error ? result.reason.message : String(result.reason);
        // The row keeps its lease until it expires, then is attempted again.
        log.error({ webhookId: rows[i]?.id, error: reason }, 'webhook attempt could not be recorded');
      }
    });
    return rows.length;
  }

  async function deliverOne(row: WebhookRow): Promise<void> {
    const attempt = row.attempts + 1;
    const { status, error } = await send(row);
    const delivered = status !== undefined && status >= 200 && status < 300;
    const outcome: DeliveryOutcome = delivered ? 'delivered' : attempt >= maxAttempts ? 'dropped' : 'retry';
    const finishedAt = now();
    const lastError = delivered ? null : (error ?? `receiver answered ${status}`).slice(0, LAST_ERROR_LIMIT);
    const recorded = await recordDeliveryAttempt(store.db, {
      id: row.id, attempts: attempt, outcome, lastStatus: status ?? null, lastError, now: finishedAt,
      ...(outcome === 'retry' ? { nextAttemptAt: finishedAt + (retryDelaysMs[attempt - 1] ?? 0) } : {}),
    });
    // Never the URL's query (it may carry the receiver's token) nor anything of the secret.
    const fields = {
      webhookId: row.id, eventId: row.event_id, taskId: row.task_id, host: hostOf(row.url), attempt, status, outcome,
    };
    if (!recorded) log.warn(fields, 'webhook attempt not recorded: the row changed while it was being sent');
    else if (outcome === 'delivered') log.info(fields, 'webhook delivered');
    else log.warn({ ...fields, error: lastError }, outcome === 'dropped' ? 'webhook dropped after its last attempt' : 'webhook attempt failed');
  }

  async function send(row: WebhookRow): Promise<{ status?: number; error?: string }> {
    // Read at send time: a secret rotated between attempts signs every later attempt.
    const account = await findAccount(store.db, row.account_id);
    if (!account) return { error: `account ${row.account_id} not found` };
    const timestamp = Math.floor(now() / 1000);
    try {
      const response = await safeRequest(row.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          [WEBHOOK_HEADERS.timestamp]: String(timestamp),
          [WEBHOOK_HEADERS.signature]: signWebhook(account.webhook_secret, timestamp, row.payload),
          [WEBHOOK_HEADERS.eventId]: row.event_id,
        },
        body: row.payload,
        timeoutMs,
        allowPrivate,
        maxResponseBytes: RESPONSE_BYTES_READ,
        field: 'callback_url',
      });
      return { status: response.status };
    } catch (error) {
      return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
  }

  function schedule(delayMs: number): void {
    if (stopped || timer) return;
    timer = setTimeout(tick, delayMs);
    // The loop alone must not keep the process alive (tests, CLI commands, shutdown).
    timer.unref();
  }

  function tick(): void {
    timer = undefined;
    // Never two passes at once: the pass in flight (a stop and start while it ran) schedules the next.
    if (running) return;
    const pass = deliverDue();
    running = pass;
    pass
      // A full batch suggests more are due: go again at once rather than after a poll interval.
      .then((count) => (count >= batchSize ? 0 : pollIntervalMs), (error: unknown) => {
        log.error({ error: error instanceof Error ? error.message : String(error) }, 'webhook delivery pass failed');
        return pollIntervalMs;
      })
      .then((delayMs) => {
        running = undefined;
        schedule(delayMs);
      });
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => {});
    },
    deliverDue,
  };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}
