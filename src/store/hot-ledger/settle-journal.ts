// The file of settles answered before SQLite has them (sqlite.ts): a settle of a hold decided in
// memory is appended here, one write, before its answer goes out, and written into the store in the
// shadow of a later call; a restart writes what the file still holds before serving. A kill of the
// process loses none of them; a power loss may lose the last ones, as it may the store's own last
// commits under synchronous=normal (docs/benchmarks-history.md), which is the only mode that uses it.
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HoldEntry, SettleEntry } from './types.js';

export interface AnsweredSettle {
  hold: HoldEntry;
  settle: SettleEntry;
}

export interface SettleJournal {
  /** Appends the settle; false when it could not be, and nothing of it stays in the file. */
  append(record: AnsweredSettle): boolean;
  /** What the file holds; a line cut short (a crash mid-write) is skipped. */
  records(): AnsweredSettle[];
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

/** How large the file may grow before the next time the store has all of it (1 MiB: a few thousand settles). */
const MAX_BYTES = 1 << 20;

export function settleJournal(path: string, maxBytes = MAX_BYTES): SettleJournal {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'a');
  let size = fstatSync(fd).size;
  let broken = false;

  const lineOf = (record: AnsweredSettle) => Buffer.from(`${JSON.stringify(record)}\n`);

  return {
    append(record) {
      if (broken) return false;
      const line = lineOf(record);
      try {
        if (writeSync(fd, line) === line.length) {
          size += line.length;
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
    },
    records() {
      const records: AnsweredSettle[] = [];
      if (size === 0) return records;
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (line === '') continue;
        try {
          records.push(JSON.parse(line) as AnsweredSettle);
        } catch {
          // cut short by a crash: its answer never went out
        }
      }
      return records;
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
