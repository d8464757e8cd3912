// The background loop that sends the outbox's webhooks (spec §6.1, DESIGN §5): claim due rows
// under a lease, POST each one signed at its own send time with the account's current secret,
// then record delivered, retry at the next delay of the schedule, or dropped. All state is in
// the rows, so several instances can run this loop on one database, and a restart resumes.
//
// Each attempt runs on its own: nothing waits for a batch. Attempts in flight are bounded per
// lane, an account and a receiver (the callback URL's origin), and in all, and a claim takes only
// what those bounds leave free, so callbacks that hang hold their lane's few slots for at most
// timeoutMs each while its backlog stays unclaimed in the store, and everyone else's rows (another
// account's to the same receiver included) go out when they are due.
import { findAccount } from '../store/accounts.js';
import type { Store } from '../store/open.js';
import { claimDueWebhooks, type DeliveryOutcome, mayHaveDueWebhooks, recordDeliveryAttempt, type WebhookRow } from '../store/webhook-outbox.js';
import { sendSignedWebhook } from './send.js';

/** What the deliverer logs with; a pino logger fits. */
export interface WebhookLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** What the deliverer reports; the gateway's metrics fit. */
export interface WebhookMetrics {
  /** One attempt made and recorded: its outcome, and how long after its due time it started. */
  observeWebhookAttempt(outcome: DeliveryOutcome, lateSeconds: number): void;
}

export interface WebhookDelivererOptions {
  store: Store;
  /** Delay after failed attempt n (1-based) is retryDelaysMs[n-1]; 1 + length attempts in all. */
  retryDelaysMs: readonly number[];
  /** A receiver must answer 2xx within this (spec: 10 s). */
  timeoutMs: number;
  allowPrivate: boolean;
  log: WebhookLog;
  /** Attempts in flight at once for one account to one receiver (URL origin), counted through the store's leases. */
  perReceiverConcurrency?: number;
  /** Attempts in flight at once in this deliverer, all receivers together. */
  maxInFlight?: number;
  metrics?: WebhookMetrics;
  now?: () => number;
  /**
   * How often the store is asked for newly due rows: new callbacks start within about this of
   * their due time; retries this deliverer scheduled wake it at their time.
   */
  pollIntervalMs?: number;
}

export interface WebhookDeliverer {
  start(): void;
  /** Stops claiming and waits for the attempts in flight to be recorded (each at most about timeoutMs). */
  stop(): Promise<void>;
  /** Claims the due rows the limits allow, makes one attempt on each, and returns how many once all are recorded. */
  deliverDue(): Promise<number>;
}

const LAST_ERROR_LIMIT = 500;
// Only the status matters; a receiver's long answer is not read.
const RESPONSE_BYTES_READ = 1024;

export function createWebhookDeliverer({
  store,
  retryDelaysMs,
  timeoutMs,
  allowPrivate,
  log,
  perReceiverConcurrency = 4,
  maxInFlight = 64,
  metrics,
  now = Date.now,
  pollIntervalMs = 250,
}: WebhookDelivererOptions): WebhookDeliverer {
  const maxAttempts = 1 + retryDelaysMs.length;
  // A lease outlives its attempt (bounded by timeoutMs) with room for the database writes; only
  // a crashed instance's rows wait for it to expire, and until then they fill their lane's slots.
  const leaseMs = timeoutMs + 30_000;
  const inFlight = new Set<Promise<void>>();
  const wakes = new Set<NodeJS.Timeout>();
  let poll: NodeJS.Timeout | undefined;
  let claiming: Promise<void> | undefined; // the loop's claim in flight: never two at once
  let claimAgain = false;
  let stopped = true;

  /** Claims what the limits leave free and starts an attempt on each row claimed. */
  async function claimAndStart(): Promise<Promise<void>[]> {
    const limit = maxInFlight - inFlight.size;
    if (limit <= 0) return [];
    const at = now();
    if (!(await mayHaveDueWebhooks(store.db, at))) return [];
    const rows = await claimDueWebhooks(store.db, {
      now: at,
      leaseMs,
      limit,
      perReceiver: perReceiverConcurrency,
      dialect: store.dialect,
    });
    return rows.map(startAttempt);
  }

  function startAttempt(row: WebhookRow): Promise<void> {
    const attempt: Promise<void> = attemptDelivery(row)
      .catch((error: unknown) => {
        // The row keeps its lease until it expires, then is attempted again.
        log.error({ webhookId: row.id, error: error instanceof Error ? error.message : String(error) }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        inFlight.delete(attempt);
        // a slot is free: the receiver's next row, or anyone's, may go now
        requestClaim();
      });
    inFlight.add(attempt);
    return attempt;
  }

  async function attemptDelivery(row: WebhookRow): Promise<void> {
    const attempt = row.attempts + 1;
    const startedAt = now();
    const { status, error } = await send(row);
    const delivered = status !== undefined && status >= 200 && status < 300;
    const outcome: DeliveryOutcome = delivered ? 'delivered' : attempt >= maxAttempts ? 'dropped' : 'retry';
    const finishedAt = now();
    const lastError = delivered ? null : (error ?? `receiver answered ${status}`).slice(0, LAST_ERROR_LIMIT);
    const nextAttemptAt = outcome === 'retry' ? finishedAt + (retryDelaysMs[attempt - 1] ?? 0) : undefined;
    const recorded = await recordDeliveryAttempt(store.db, {
      id: row.id,
      attempts: attempt,
      outcome,
      lastStatus: status ?? null,
      lastError,
      now: finishedAt,
      ...(nextAttemptAt !== undefined ? { nextAttemptAt } : {}),
    });
    const lateMs = Math.max(0, startedAt - row.next_attempt_at);
    // Never the URL's query (it may carry the receiver's token) nor anything of the secret.
    const fields = {
      webhookId: row.id,
      eventId: row.event_id,
      taskId: row.task_id,
      host: hostOf(row.url),
      attempt,
      status,
      outcome,
      lateMs,
    };
    if (!recorded) {
      log.warn(fields, 'webhook attempt not recorded: the row changed while it was being sent');
      return;
    }
    metrics?.observeWebhookAttempt(outcome, lateMs / 1000);
    if (nextAttemptAt !== undefined) wakeAt(nextAttemptAt);
    if (outcome === 'delivered') log.info(fields, 'webhook delivered');
    else log.warn({ ...fields, error: lastError }, outcome === 'dropped' ? 'webhook dropped after its last attempt' : 'webhook attempt failed');
  }

  async function send(row: WebhookRow): Promise<{ status?: number; error?: string }> {
    // Read at send time: a secret rotated between attempts signs every later attempt.
    const account = await findAccount(store.db, row.account_id);
    if (!account) return { error: `account ${row.account_id} not found` };
    const answer = await sendSignedWebhook({
      url: row.url,
      secret: account.webhook_secret,
      eventId: row.event_id,
      payload: row.payload,
      timeoutMs,
      allowPrivate,
      maxResponseBytes: RESPONSE_BYTES_READ,
      field: 'callback_url',
      now,
    });
    return answer.error === undefined ? { status: answer.status } : { error: answer.error };
  }

  /** Claims now, or right after the claim in flight: claims never overlap, and none is lost. */
  function requestClaim(): void {
    if (stopped) return;
    if (claiming) {
      claimAgain = true;
      return;
    }
    claimAgain = false;
    claiming = claimAndStart()
      .then(
        () => {},
        (error: unknown) => {
          // the next poll tries again
          log.error({ error: error instanceof Error ? error.message : String(error) }, 'webhook claim failed');
        },
      )
      .finally(() => {
        claiming = undefined;
        if (claimAgain) requestClaim();
      });
  }

  /** A retry this deliverer scheduled is claimed at its time, not at the next poll. */
  function wakeAt(at: number): void {
    if (stopped) return;
    // a millisecond past `at`, so the claim's `next_attempt_at <= now` holds when it runs
    const timer = setTimeout(
      () => {
        wakes.delete(timer);
        requestClaim();
      },
      Math.max(0, at - now() + 1),
    );
    timer.unref();
    wakes.add(timer);
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      // The loop alone must not keep the process alive (tests, CLI commands, shutdown).
      poll = setInterval(requestClaim, pollIntervalMs).unref();
      requestClaim();
    },
    async stop() {
      stopped = true;
      clearInterval(poll);
      poll = undefined;
      for (const timer of wakes) clearTimeout(timer);
      wakes.clear();
      await claiming;
      // Each attempt in flight ends within timeoutMs and records its outcome: the next deliverer
      // on this store continues the schedule from the rows, with no attempt lost or made twice.
      await Promise.all([...inFlight]);
    },
    async deliverDue() {
      const started = await claimAndStart();
      await Promise.all(started);
      return started.length;
    },
  };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}
