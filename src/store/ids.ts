// Random ids that say what they name: `hold_Xk3…` in a log line needs no lookup to be read.
import { randomFillSync } from 'node:crypto';

export type IdKind = 'acct' | 'key' | 'hold' | 'use' | 'task' | 'evt' | 'file' | 'req' | 'asset' | 'img' | 'vid' | 'erase' | 'min' | 'wh' | 'inst';

const ID_BYTES = 16; // 128 bits: collisions are not a case any caller has to handle
// Filled 256 ids at a time: one call into the system's generator instead of one per id.
const pool = Buffer.alloc(ID_BYTES * 256);
let offset = pool.length;

export function newId(kind: IdKind): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `${kind}_${id}`;
}
