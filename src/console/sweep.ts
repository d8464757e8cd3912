// Sign-in links and sessions are of no use once expired; they are kept a day longer (who signed
// in, when and how can still be read), then deleted by the periodic sweep (files/sweep.ts).
import { deleteExpiredLoginLinks } from '../store/login-links.js';
import type { Store } from '../store/open.js';
import { deleteExpiredSessions } from '../store/sessions.js';

export const KEEP_EXPIRED_SIGN_INS_MS = 24 * 60 * 60 * 1000;

/** Deletes links and sessions that expired over a day before `now`; returns how many rows. */
export async function deleteExpiredSignIns(store: Store, now: number): Promise<number> {
  const before = now - KEEP_EXPIRED_SIGN_INS_MS;
  return (await deleteExpiredLoginLinks(store.db, { before })) + (await deleteExpiredSessions(store.db, { before }));
}
