// Whether the store takes writes. A write the store refuses (a full disk, a lost connection) turns
// the gateway unhealthy: /healthz answers 503 with the cause, new metered calls are refused with
// 503 before any hold, and a probe (the instance heartbeat) turns it healthy again once a write lands.
// So does a lease the instance could not renew in time (billing/instance.ts): past it, other
// instances may soon take this one for dead and end its holds, so it takes no new call.
import { GatewayError } from '../errors.js';

export interface HealthLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

// PostgreSQL SQLSTATE classes of a store that cannot take writes: connection exceptions,
// insufficient resources (disk full), operator intervention, system and internal errors.
const PG_STORE_CLASSES = new Set(['08', '53', '57', '58', 'XX']);
const CONNECTION_LOST = Symbol('tollroute.storeConnectionLost');

/**
 * Marks an error the store's own connection raised (refused, reset, ended): the same codes from a
 * caller's socket or an upstream say nothing about the store, so only the store's driver marks them.
 */
export function markConnectionLost(error: unknown): never {
  if (error instanceof Error) Object.defineProperty(error, CONNECTION_LOST, { value: true });
  throw error;
}

/** An error that says the store itself failed, as against a bug or a refused request. */
export function isStoreFault(error: unknown): boolean {
  if (!(error instanceof Error) || error instanceof GatewayError) return false;
  if ((error as { [CONNECTION_LOST]?: boolean })[CONNECTION_LOST]) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  if (code.startsWith('SQLITE_')) return !code.startsWith('SQLITE_CONSTRAINT');
  return /^[0-9A-Z]{5}$/.test(code) && PG_STORE_CLASSES.has(code.slice(0, 2));
}

/** A short name for the cause, as an operator would search for it (SQLITE_FULL, 53100, ECONNREFUSED). */
export function faultCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
}

/** The problem's code while the instance's lease on its holds has run out. */
export const LEASE_EXPIRED = 'LEASE_EXPIRED';

export class StoreHealth {
  private cause: unknown;
  private since = 0;
  /** Until when the instance's lease runs; none until an instance takes one. */
  private leaseUntil = Number.POSITIVE_INFINITY;

  constructor(
    private readonly log: HealthLogger,
    private readonly now: () => number = Date.now,
  ) {}

  get ok(): boolean {
    return this.cause === undefined && this.now() < this.leaseUntil;
  }

  /** What failed, for /healthz and the 503's log line. */
  get problem(): { code: string; since: number } | undefined {
    if (this.cause !== undefined) return { code: faultCode(this.cause), since: this.since };
    return this.now() < this.leaseUntil ? undefined : { code: LEASE_EXPIRED, since: this.leaseUntil };
  }

  /** The instance's lease (its heartbeat landed) runs until `until`. */
  renewLease(until: number): void {
    this.leaseUntil = until;
  }

  /** Records a failed write; returns whether it was a store fault (then the store is unhealthy). */
  failed(error: unknown): boolean {
    if (!isStoreFault(error)) return false;
    if (this.cause === undefined) {
      this.since = Date.now();
      this.log.error({ err: error, code: faultCode(error) }, 'the store refused a write; new calls get 503 until it takes writes again');
    }
    this.cause = error;
    return true;
  }

  recovered(): void {
    if (this.cause === undefined) return;
    this.log.warn({ code: faultCode(this.cause), downMs: Date.now() - this.since }, 'the store takes writes again');
    this.cause = undefined;
  }
}
