// Ids that say what they name (`hold_…` in a log line needs no lookup to be read) and that sort
// by creation time: 8 characters of milliseconds, then 14 random ones. A new row's id then lands
// at the end of its primary-key index instead of on a random page, so a commit rewrites a few
// index pages, not one per row (the hot ledger writes several rows per call).
import { randomFillSync } from 'node:crypto';

export type IdKind = 'acct' | 'key' | 'hold' | 'use' | 'task' | 'evt' | 'file' | 'req' | 'asset' | 'img' | 'vid' | 'erase' | 'min' | 'wh' | 'inst' | 'link';

// base64url's 64 characters in ASCII order, so that comparing ids as text compares their times.
const SORTED_DIGITS = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const TIME_CHARS = 8; // 48 bits of milliseconds: until the year 10889
const RANDOM_CHARS = 14; // 84 bits: ids made in the same millisecond never meet
const RANDOM_BYTES = 11; // 88 bits of base64url, cut to 14 characters
// Random bytes for every id made here, filled a few hundred ids at a time: one call into the
// system's generator instead of one (and a buffer) per id.
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** Where `bytes` unused random bytes start in the pool (at most its length), refilled when it runs short. */
function takeRandom(bytes: number): number {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const start = offset;
  offset += bytes;
  return start;
}

let lastMs = -1;
let lastTime = '';

function timePart(ms: number): string {
  if (ms === lastMs) return lastTime;
  let text = '';
  for (let i = 0, rest = ms; i < TIME_CHARS; i++, rest = Math.floor(rest / 64)) text = SORTED_DIGITS[rest % 64] + text;
  lastMs = ms;
  lastTime = text;
  return text;
}

export function newId(kind: IdKind): string {
  const start = takeRandom(RANDOM_BYTES);
  const random = pool.toString('base64url', start, start + RANDOM_BYTES).slice(0, RANDOM_CHARS);
  return `${kind}_${timePart(Date.now())}${random}`;
}

/** `bytes` random bytes as hex (2 × bytes characters), for ids that are not rows (a translated message's `msg_…`). */
export function randomHex(bytes: number): string {
  const start = takeRandom(bytes);
  return pool.toString('hex', start, start + bytes);
}
