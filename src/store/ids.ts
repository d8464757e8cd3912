// Ids that say what they name (`hold_…` in a log line needs no lookup to be read) and that sort
// by creation time: 8 digits of milliseconds, then 14 random ones. A new row's id then lands
// at the end of its primary-key index instead of on a random page, so a commit rewrites a few
// index pages, not one per row (the hot ledger writes several rows per call).
import { randomFillSync } from 'node:crypto';

export type IdKind =
  | 'acct'
  | 'key'
  | 'hold'
  | 'use'
  | 'task'
  | 'evt'
  | 'file'
  | 'req'
  | 'asset'
  | 'img'
  | 'vid'
  | 'erase'
  | 'min'
  | 'wh'
  | 'whk'
  | 'inst'
  | 'link'
  | 'rb'
  | 'pc';

// Letters and digits only, so a double click selects a whole id in a browser or a terminal; in
// ASCII order, so that comparing ids as text compares their times. (Ids made before used
// base64url's digits, `-` and `_` among them; they stay valid, and all sort before these.)
const SORTED_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE = SORTED_DIGITS.length;
const TIME_CHARS = 8; // 62^8 milliseconds: until the year 8888
const RANDOM_CHARS = 14; // 83 bits: ids made in the same millisecond never meet
// A random byte is used only below the largest multiple of 62 under 256, so every digit is as likely.
const UNBIASED_BELOW = 256 - (256 % BASE);
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
  for (let i = 0, rest = ms; i < TIME_CHARS; i++, rest = Math.floor(rest / BASE)) text = SORTED_DIGITS[rest % BASE] + text;
  lastMs = ms;
  lastTime = text;
  return text;
}

/** `count` random digits; a byte of the pool at or above UNBIASED_BELOW is skipped (3 in 100). */
function randomDigits(count: number): string {
  let text = '';
  while (text.length < count) {
    const take = count - text.length + 2;
    const start = takeRandom(take);
    for (let i = start; i < start + take && text.length < count; i++) {
      const byte = pool[i]!;
      if (byte < UNBIASED_BELOW) text += SORTED_DIGITS[byte % BASE];
    }
  }
  return text;
}

export function newId(kind: IdKind): string {
  return `${kind}_${timePart(Date.now())}${randomDigits(RANDOM_CHARS)}`;
}

/** `bytes` random bytes as hex (2 × bytes characters), for ids that are not rows (a translated message's `msg_…`). */
export function randomHex(bytes: number): string {
  const start = takeRandom(bytes);
  return pool.toString('hex', start, start + bytes);
}
