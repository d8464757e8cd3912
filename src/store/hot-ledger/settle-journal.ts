// The file of settles answered before SQLite has them (sqlite.ts): the settles of holds decided in
// memory are appended here, one write for those of an event-loop turn, before their answers go out,
// and written into the store later, many to a transaction; a restart writes what the file still
// holds before serving. A stream's hold decided in memory is appended too, before its first byte,
// and written into the store with its settle: a restart that finds it without one ends it (the
// crash cut its stream off before any progress was recorded, which needs the hold's row). A kill of
// the process loses none of them; a power loss may lose the last ones, as it may the store's own
// last commits under synchronous=normal, which is the only mode that uses it.
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HoldEntry, SettleEntry } from './types.js';

export interface AnsweredSettle {
  hold: HoldEntry;
  settle: SettleEntry;
}

/** A line of the file: a settle answered, or a stream's hold before its first byte (no settle yet). */
export interface JournalRecord {
  hold: HoldEntry;
  settle?: SettleEntry;
}

export interface SettleJournal {
  /** Appends the records in one write; false when they could not be, and nothing of them stays in the file. */
  appendAll(records: JournalRecord[]): boolean;
  /** What the file holds, in order; a line cut short (a crash mid-write) is skipped. */
  records(): JournalRecord[];
  /** Whether the next `written()` empties the file. */
  readonly full: boolean;
  /**
   * The store has every settle in the file: it is emptied, once it has grown past `maxBytes` (each
   * truncation costs the file system a journal transaction; a settle written already is skipped when
   * a restart writes the file, by its hold row).
   */
  written(): void;
  /** Empties the file now. */
  clear(): void;
  close(): void;
}

/** How large the file may grow before the next time the store has all of it (4 MiB: about six thousand settles). */
const MAX_BYTES = 4 << 20;

export function settleJournal(path: string, maxBytes = MAX_BYTES): SettleJournal {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'a');
  let size = fstatSync(fd).size;
  let broken = false;

  const lineOf = (record: JournalRecord) => `${JSON.stringify(record.settle ? fieldsOf(record as AnsweredSettle) : holdFieldsOf(record.hold))}\n`;

  /** Writes the lines in one call; false when they could not all be, and nothing of them stays. */
  function appendLines(lines: string): boolean {
    if (broken) return false;
    const bytes = Buffer.from(lines);
    try {
      if (writeSync(fd, bytes) === bytes.length) {
        size += bytes.length;
        return true;
      }
    } catch {
      // (a full disk): cut what landed, below
    }
    try {
      ftruncateSync(fd, size);
    } catch {
      broken = true; // a line cut short would join the next one: nothing more is appended
    }
    return false;
  }

  return {
    appendAll: (records) => appendLines(records.map(lineOf).join('')),
    records() {
      const records: JournalRecord[] = [];
      if (size === 0) return records;
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (line === '') continue;
        try {
          records.push(recordOf(JSON.parse(line)));
        } catch {
          // cut short by a crash: its answer never went out
        }
      }
      return records;
    },
    get full() {
      return size >= maxBytes;
    },
    written() {
      if (size >= maxBytes) this.clear();
    },
    clear() {
      ftruncateSync(fd, 0);
      size = 0;
    },
    close() {
      closeSync(fd);
    },
  };
}

/** A hold's fields in a line, after its version. */
type HoldFields = [
  ...[holdId: string, accountId: string, keyId: string | null, amountMicros: number, requestId: string, model: string],
  ...[endpoint: string, instanceId: string | null, clientRequestId: string | null, heldAt: number],
];
/** A settle's fields in a line, after its hold's (a line from before price lists has no priceId). */
type SettleFields = [
  ...[chargeMicros: number, units: string, settleRequestId: string | null, flags: string[], usageId: string, settledAt: number],
  ...[upstreamMs: number | null, channel: string | null, attempts: number | null, priceId?: string | null],
];
/** Where a settle's fields begin in a line: after the version and the hold's ten. */
const SETTLE_AT = 11;

/** A line's fields, in order. Positional: JSON of an array costs about half that of the named objects. */
type Fields = [version: 1, ...HoldFields, ...SettleFields];
/** A stream's hold, before its settle: the hold's fields of a settle's line, under a version of its own. */
type StreamHoldFields = [version: 2, ...HoldFields];

// biome-ignore format: the hold's fields, then the settle's
const fieldsOf = ({ hold: h, settle: e }: AnsweredSettle): Fields => [
  1, h.holdId, h.accountId, h.keyId, h.amountMicros, h.requestId, h.model, h.endpoint, h.instanceId, h.clientRequestId, h.now,
  e.chargeMicros, e.units, e.requestId, e.flags, e.usageId, e.now, e.upstreamMs ?? null, e.channel ?? null, e.attempts ?? null,
  e.priceId ?? null,
];

// biome-ignore format: the hold's fields, as a settle's line has them
const holdFieldsOf = (h: HoldEntry): StreamHoldFields => [
  2, h.holdId, h.accountId, h.keyId, h.amountMicros, h.requestId, h.model, h.endpoint, h.instanceId, h.clientRequestId, h.now,
];

/** The record a line holds: positional, or the named objects an earlier version wrote. */
function recordOf(parsed: Fields | StreamHoldFields | AnsweredSettle): JournalRecord {
  if (!Array.isArray(parsed)) return parsed;
  const [holdId, accountId, keyId, amountMicros, requestId, model, endpoint, instanceId, clientRequestId, heldAt] = parsed.slice(1, SETTLE_AT) as HoldFields;
  const hold = { holdId, accountId, keyId, amountMicros, requestId, model, endpoint, instanceId, clientRequestId, now: heldAt };
  if (parsed[0] === 2) return { hold };
  const [chargeMicros, units, settleRequestId, flags, usageId, settledAt, upstreamMs, channel, attempts, priceId = null] = parsed.slice(
    SETTLE_AT,
  ) as SettleFields;
  return { hold, settle: { holdId, chargeMicros, units, requestId: settleRequestId, flags, usageId, now: settledAt, upstreamMs, channel, attempts, priceId } };
}
