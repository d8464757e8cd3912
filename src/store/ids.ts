// Random ids that say what they name: `hold_Xk3…` in a log line needs no lookup to be read.
import { randomBytes } from 'node:crypto';

export type IdKind = 'acct' | 'key' | 'hold' | 'use' | 'task' | 'evt' | 'file' | 'req' | 'asset' | 'img' | 'vid' | 'erase' | 'min' | 'wh' | 'inst';

// 16 bytes = 128 bits: collisions are not a case any caller has to handle.
export function newId(kind: IdKind): string {
  return `${kind}_${randomBytes(16).toString('base64url')}`;
}
