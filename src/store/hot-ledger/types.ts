// The two money steps every metered call takes (hold, then settle or release), written per store as
// the fewest statements it needs: no query builder, one transaction (SQLite) or one statement
// (PostgreSQL) per step. Same rules and same rows as billing/ledger.ts's transaction steps, which
// the task engine uses inside its own transactions; the contract tests run both.

export interface HoldEntry {
  holdId: string;
  accountId: string;
  keyId: string | null;
  amountMicros: number;
  requestId: string;
  model: string;
  endpoint: string;
  instanceId: string | null;
  clientRequestId: string | null;
  now: number;
}

export interface SettleEntry {
  holdId: string;
  /** What the usage costs at the model's price, before the cap. */
  chargeMicros: number;
  /** JSON of the units used. */
  units: string;
  requestId: string | null;
  flags: string[];
  usageId: string;
  now: number;
  /** The channel's answer time (usage.upstream_ms); null when unknown. */
  upstreamMs?: number | null;
  /** The channel that served the call and the attempts it took (usage.channel, usage.attempts). */
  channel?: string | null;
  attempts?: number | null;
  /** The price list the usage was priced at (usage.price_id), stored already (billing/price-lists.ts). */
  priceId?: string | null;
}

export type SettleResult =
  /** The hold was open and is now settled. */
  | { kind: 'applied'; chargedMicros: number; unbilledMicros: number }
  /**
   * Nothing was written: the hold was not open (ended earlier, or never existed), or it reserved in
   * a key's spend caps, which only the transaction step moves (billing/key-limits.ts).
   */
  | { kind: 'not-open' }
  /** A charge past the hold on an account with an overdraft: the transaction step decides it (rare). */
  | { kind: 'needs-transaction' };

export interface HotLedger {
  /** False when the balance does not cover the amount, or the account does not exist. */
  hold(entry: HoldEntry): Promise<boolean>;
  settle(entry: SettleEntry): Promise<SettleResult>;
  /** False when nothing was written: as a settle's 'not-open'. */
  release(entry: { holdId: string; note: string | null; now: number }): Promise<boolean>;
  /**
   * The hold decided now, in memory, when the store can (SQLite, outside a transaction of
   * another's): true, held and kept unwritten, to be written with its settle or release (one step
   * instead of two), or alone by `writeHold` or when anything else needs it first. Its settle or
   * `writeHold` rejects with UnwrittenHoldError when it could not be written: nothing was held, and
   * nothing of the call may reach the caller. False: refused (no such account, or not enough).
   * Undefined: use hold().
   */
  holdAtOnce?(entry: HoldEntry): boolean | undefined;
  /**
   * Makes a hold decided at once durable now (a stream's, before anything reaches its caller):
   * appended to the settle journal at the end of this turn, and written later with its settle; or,
   * without a journal (or when it cannot take it), written alone in the next batch. Resolves once it is.
   */
  writeHold?(holdId: string): Promise<void>;
  /** Called before any statement of another user of the connection runs: writes what is pending first. */
  beforeForeignStatement?(): void;
  /** A call's upstream request is on its way: the gateway waits on the upstream, a moment for writes put off. */
  upstreamRequestSent?(): void;
  /** Writes what is pending (settles answered already) before the store closes. */
  close?(): void;
}

/** Where the hot ledger reports what an operator should know of (a failed batch, replayed step by step). */
export interface HotLedgerLog {
  warn(obj: object, msg: string): void;
}

/**
 * A hold decided at once (in memory) that could not be written (the store failed, or the balance
 * no longer covered it when it was): nothing of it is in the store, so there is nothing to end or
 * retry, and its call must not reach the caller. `cause`: the store's error; none when the balance
 * was spent.
 */
export class UnwrittenHoldError extends Error {
  constructor(
    readonly holdId: string,
    cause?: unknown,
  ) {
    super(cause === undefined ? 'the balance no longer covered the hold when it was written' : 'the hold could not be written', { cause });
    this.name = 'UnwrittenHoldError';
  }
}
