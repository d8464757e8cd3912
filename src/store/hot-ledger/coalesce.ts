// Steps of one kind (holds, say) asked for while the event loop polls are written together, by one
// statement, instead of one statement each: the commit, and the wait for the account's row lock on
// a busy account, are paid once per batch instead of once per step. While a kind's statements are
// in flight, its new steps wait and go out together in the next one.
//
// A batch statement is all or nothing. When it fails (a deadlock, a constraint one step broke, a
// lost connection), its steps are written again one by one with the single-step statement, so that
// only the step at fault fails. Steps the batch could not decide exactly, and a second step on the
// same hold, are written one by one too, after it.

export interface BatchedStep<Entry, Result> {
  /**
   * Writes the entries in one statement that commits by itself, and returns each entry's result, or
   * undefined for an entry it left unwritten because only the single-step statement decides it exactly.
   * Entries name distinct targets. Throws, having written nothing, when the statement failed.
   */
  writeBatch(entries: Entry[]): Promise<(Result | undefined)[]>;
  /** The single-step statement. */
  writeOne(entry: Entry): Promise<Result>;
  /** What a step writes to (its hold): two steps on one target never share a batch. */
  target(entry: Entry): string;
}

export interface CoalesceLimits {
  /** Most steps in one statement; more waiting are split across statements. */
  maxBatch: number;
  /** Most statements of this kind in flight at once. */
  maxInFlight: number;
  /** Fewest steps a statement starts with while another of its kind is in flight (and the size a split stops at). */
  minShare: number;
}

/** Told of a batch statement that failed, before its steps are written one by one (for the log). */
export type BatchFailed = (error: unknown, steps: number) => void;

interface Waiting<Entry, Result> {
  entry: Entry;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/** Returns the function a caller awaits: it resolves once the statement holding its step has committed. */
export function coalesce<Entry, Result>(
  step: BatchedStep<Entry, Result>,
  limits: CoalesceLimits,
  onBatchFailed?: BatchFailed,
): (entry: Entry) => Promise<Result> {
  let waiting: Waiting<Entry, Result>[] = [];
  let inFlight = 0;
  let scheduled = false;

  function schedule(): void {
    if (scheduled || waiting.length === 0 || inFlight >= limits.maxInFlight) return;
    if (inFlight > 0 && waiting.length < limits.minShare) return; // they join the next statement instead
    scheduled = true;
    // After the event loop's poll phase: the steps of every callback it ran join this batch.
    setImmediate(startBatch);
  }

  function startBatch(): void {
    scheduled = false;
    // Shared among the statements free to start, so that they run side by side on the server's cores.
    const share = Math.max(limits.minShare, Math.ceil(waiting.length / (limits.maxInFlight - inFlight)));
    const steps = waiting.slice(0, Math.min(limits.maxBatch, share));
    waiting = waiting.slice(steps.length);
    inFlight += 1;
    void writeTogether(step, steps, onBatchFailed).then((undecided) => {
      inFlight -= 1;
      schedule();
      return writeOneByOne(step, undecided); // outside the limit: they are rare, and the next batch need not wait for them
    });
    schedule(); // more waiting than one batch holds, and a statement free
  }

  return (entry) =>
    new Promise<Result>((resolve, reject) => {
      waiting.push({ entry, resolve, reject });
      schedule();
    });
}

/** Writes the steps in one statement and returns those it left undecided: all of them if it failed. Never rejects. */
async function writeTogether<Entry, Result>(
  step: BatchedStep<Entry, Result>,
  steps: Waiting<Entry, Result>[],
  onBatchFailed: BatchFailed | undefined,
): Promise<Waiting<Entry, Result>[]> {
  const targets = new Set<string>();
  const batch: Waiting<Entry, Result>[] = [];
  for (const s of steps) {
    const target = step.target(s.entry);
    if (targets.has(target)) continue; // a later step on this hold: alone, after the batch
    targets.add(target);
    batch.push(s);
  }
  const results = await step.writeBatch(batch.map((s) => s.entry)).catch((error: unknown) => {
    onBatchFailed?.(error, batch.length);
    return batch.map(() => undefined);
  });
  const decided = new Set<Waiting<Entry, Result>>();
  batch.forEach((s, i) => {
    const result = results[i];
    if (result === undefined) return;
    decided.add(s);
    s.resolve(result);
  });
  return steps.filter((s) => !decided.has(s));
}

/** Each step in a statement of its own, in queue order. Never rejects. */
async function writeOneByOne<Entry, Result>(step: BatchedStep<Entry, Result>, steps: Waiting<Entry, Result>[]): Promise<void> {
  for (const s of steps) {
    try {
      s.resolve(await step.writeOne(s.entry));
    } catch (error) {
      s.reject(error);
    }
  }
}
