// The fault matrix's vocabulary: the faults, the two callers, the timings every cell runs on, and
// what a family (an endpoint family or a task kind) plugs in. DESIGN §3 and §5 are the rules.

import { sandboxCatalogue } from '../../../src/config/sandbox-catalogue.js';
import type { ConfigInput } from '../../../src/config/schema.js';
import type { TestGateway } from '../../helpers/gateway.js';

export const FAULTS = ['4xx', '5xx', '429', 'hang', 'reset', 'drop', 'malformed', 'error'] as const;
export type Fault = (typeof FAULTS)[number];

export const FAULT_NAMES: Record<Fault, string> = {
  '4xx': 'upstream 4xx',
  '5xx': 'upstream 5xx',
  '429': '429 with retry-after',
  hang: 'hang past the deadline',
  reset: 'reset before the first byte',
  drop: 'drop mid-stream',
  malformed: 'malformed JSON',
  error: 'error event or code mid-stream',
};

export const CALLERS = ['waits', 'leaves'] as const;
export type Caller = (typeof CALLERS)[number];

// Margins are wide so that a loaded machine (the whole suite at once) keeps every cell's order of events:
// the caller leaves well before the fault, and the fault comes well before a timeout.
export const TIMING = {
  /** limits.request_timeout_ms: the call deadline (a hang on a channel without a short headers timeout ends here). */
  requestTimeoutMs: 2_000,
  /** The headers timeout of the channels tasks poll (and of the OpenAI channel): a hung poll or generation ends here. */
  headersTimeoutMs: 1_500,
  /** tasks.timeout_ms: a task whose upstream keeps failing is failed and refunded past this. */
  taskTimeoutMs: 2_500,
  /** How long the upstream works before its fault when the caller leaves first: the leave always comes first. */
  leaveDelayMs: 800,
  /** Between chunks when the caller leaves mid-stream, so it leaves after the first chunk and before the fault. */
  chunkDelayMs: 150,
  /** Chunks (or AST frames) a stream sends before a drop or an error event. */
  faultAfterChunks: 3,
};

/** What the sandbox does for each fault (src/sandbox/faults.ts); a family adds the selectors and may adjust it. */
export const BEHAVIOUR: Record<Fault, Record<string, unknown>> = {
  '4xx': { status: 400 },
  '5xx': { status: 503 },
  '429': { status: 429, headers: { 'retry-after': '7' } },
  hang: { hang: true },
  reset: { reset: true },
  drop: { drop_after_chunks: TIMING.faultAfterChunks },
  malformed: { malformed: true },
  error: { error_after_chunks: TIMING.faultAfterChunks },
};

/** What the account's ledger must show once the hold has ended. */
export type MoneyRule =
  | { kind: 'release' }
  /** Nothing charged, yet on record: the hold settled at 0 with one usage row of 0 (a failed subtitle erase). */
  | { kind: 'recorded' }
  /**
   * Billed: `check` looks at the usage row's units; the amount is checked against the hold for every
   * settle, and against `atMostMicros` (what the same call cost completed) when given.
   */
  | { kind: 'settle'; check(units: Record<string, number>): void; atMostMicros?: number };

export const RELEASED: MoneyRule = { kind: 'release' };
export const RECORDED_FREE: MoneyRule = { kind: 'recorded' };

export interface CellContext {
  gw: TestGateway;
  accountId: string;
  key: string;
  fault: Fault;
  caller: Caller;
}

export interface Family {
  name: string;
  /** Why the fault has no meaning for this family (N/A in the table); undefined when it applies. */
  notApplicable(fault: Fault): string | undefined;
  /** Work made before the fault is programmed (erase: its source video); its ledger rows are not the cell's. */
  prepare?(ctx: CellContext): Promise<Record<string, string>>;
  /** Programs the fault, calls as the caller does, checks the documented answer; says what the money must show. */
  run(ctx: CellContext, prepared: Record<string, string>): Promise<MoneyRule>;
  /** A rough duration, so the slow cells start first. */
  slow?(fault: Fault): boolean;
}

export interface Cell {
  family: Family;
  fault: Fault;
  caller: Caller;
}

export const cellName = ({ family, fault, caller }: { family: { name: string }; fault: Fault; caller: Caller }) =>
  `${family.name} × ${FAULT_NAMES[fault]} × caller ${caller}`;

/** Every gateway of the matrix: the sandbox catalogue, with short deadlines so hangs and failing tasks end in seconds. */
export function matrixConfig(sandboxUrl: string): Partial<ConfigInput> {
  const catalogue = sandboxCatalogue(sandboxUrl);
  const channels = Object.fromEntries(Object.entries(catalogue.channels ?? {}).map(([name, channel]) => [name, channel]));
  // Task upstreams are polled with no deadline of their own: the headers timeout ends a hung poll. The
  // OpenAI channel (images, the minutes summary, chat) too; messages, speech and search hang until the call deadline.
  for (const name of ['sandbox-openai', 'sandbox-ark', 'sandbox-minutes', 'sandbox-erase']) {
    channels[name] = { ...channels[name]!, timeouts: { headers_ms: TIMING.headersTimeoutMs } };
  }
  return {
    ...catalogue,
    channels,
    limits: { request_timeout_ms: TIMING.requestTimeoutMs },
    // Every cell faults one channel on purpose: the breaker would take it out for the cells after.
    routing: { circuit_breaker: false },
    tasks: {
      // not faster: every gateway's engine and webhook deliverer poll the store this often, all on one event loop
      poll_interval_ms: { image: 100, video: 100, erase: 100, minutes: 100 },
      tick_ms: 100,
      lease_ms: 5_000,
      // a submission is bounded at half of this; the headers timeout ends a hung create first
      submit_lease_ms: 4 * TIMING.headersTimeoutMs,
      timeout_ms: TIMING.taskTimeoutMs,
    },
  };
}
