// Cursor pages of the account API: newest first on (created_at, id) (store/keyset.ts). The cursor
// is opaque to callers: base64url of where the last page ended, so its form may change freely.
import { invalidRequest } from '../errors.js';
import type { Position } from '../store/keyset.js';
import { DEFAULT_PAGE_LIMIT, readLimit } from './schemas/query.js';

export function encodeCursor({ createdAt, id }: Position): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

export function decodeCursor(cursor: string): Position {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string' && value[1] !== '') {
    return { createdAt: value[0] as number, id: value[1] };
  }
  throw invalidRequest('cursor: not a cursor this API returned; pass next_cursor back as it came');
}

/** `?limit=` and `?cursor=`: the page size and where the page starts (undefined: at the newest row). */
export function readPage(query: unknown): { limit: number; olderThan: Position | undefined } {
  const cursor = (query as { cursor?: string } | undefined)?.cursor;
  return { limit: readLimit(query) ?? DEFAULT_PAGE_LIMIT, olderThan: cursor === undefined ? undefined : decodeCursor(cursor) };
}

/**
 * A page out of `limit + 1` rows read: the extra row is not shown, it only says that another page
 * follows, so the last page has no cursor (and no empty page after it).
 */
export function toPage<Row extends { created_at: number; id: string }, View>(rows: Row[], limit: number, view: (row: Row) => View) {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    data: shown.map(view),
    next_cursor: rows.length > limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
  };
}
