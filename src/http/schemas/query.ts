// Query strings are text: body schemas never coerce types, so numbers in a query are matched as
// digits here and read by the route.
import { invalidRequest } from '../../errors.js';

export const LimitParam = { type: 'string', pattern: '^(?:[1-9][0-9]{0,2}|1000)$' } as const;

/** `?limit=` as a number (1 to 1000), or undefined for the list's default. */
export const readLimit = (query: unknown): number | undefined => {
  const limit = (query as { limit?: string } | undefined)?.limit;
  return limit === undefined ? undefined : Number(limit);
};

export const DEFAULT_PAGE_LIMIT = 50;

/** `?limit=` of a list paged by cursor: 1 to 500, 50 when absent (read with readLimit). */
export const PageLimitParam = {
  type: 'string',
  pattern: '^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$',
  description: `Rows per page, 1 to 500 (default ${DEFAULT_PAGE_LIMIT}).`,
} as const;

/** `?cursor=`: the `next_cursor` of the page before, passed back as it came. */
export const CursorParam = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{1,512}$',
  description: 'The next_cursor of the previous page, as it came; absent for the first page.',
} as const;

/** What a query pattern means, in words: a schema error names the bounds, not the regular expression. */
export const PATTERN_MEANINGS: Readonly<Record<string, string>> = {
  [LimitParam.pattern]: 'must be an integer from 1 to 1000',
  [PageLimitParam.pattern]: 'must be an integer from 1 to 500',
  [CursorParam.pattern]: 'not a cursor this API returned; pass next_cursor back as it came',
};

/** An instant in a query: RFC 3339 with its offset (`2024-05-01T00:00:00Z`), read by readInstant. */
export const DateTimeParam = (description: string) => ({ type: 'string', format: 'date-time', description }) as const;

/** A DateTimeParam as epoch milliseconds, or undefined when absent. */
export function readInstant(query: unknown, field: string): number | undefined {
  const text = (query as Record<string, string | undefined> | undefined)?.[field];
  if (text === undefined) return undefined;
  // The format check passes a few forms Date.parse cannot read (a leap second, a lowercase `t`).
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw invalidRequest(`${field}: must be a date-time such as 2024-05-01T00:00:00Z`);
  return ms;
}
