// The random secrets behind sign-in links and session cookies. The store keeps only their sha256:
// 32 random bytes are not a guessable password, so no salt is needed, and an unsalted hash is what
// finds the row with one indexed lookup (as for API keys, billing/api-keys.ts).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const newSecret = (): string => randomBytes(32).toString('base64url');

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/**
 * Whether a row found by its hash really holds this one, compared in constant time: the lookup
 * found it by equality already, but the check itself never depends on where two hashes differ.
 */
export function sameHash(storedHex: string, presentedHex: string): boolean {
  const stored = Buffer.from(storedHex, 'hex');
  const presented = Buffer.from(presentedHex, 'hex');
  return stored.length === presented.length && timingSafeEqual(stored, presented);
}
