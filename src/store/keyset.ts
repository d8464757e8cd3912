// Keyset pagination, newest first, on (created_at, id): a page starts strictly after the last row
// of the one before. Rows written meanwhile are newer, so they sort before the first page and never
// shift a later one: unlike OFFSET, no row is skipped or repeated while others are inserted.
import { type SqlBool, sql } from 'kysely';

/** Where a page ended: the last row's creation time and id (the id breaks ties within a millisecond). */
export interface Position {
  createdAt: number;
  id: string;
}

/**
 * Rows after `position` in newest-first order, for a query on one table ordered by
 * `created_at desc, id desc` (the id comparison uses the same collation as that order). The plain
 * `created_at <=` bound is what both planners can start an index range at (…, created_at): with
 * the disjunction alone they scan the account's rows from its newest on every page.
 */
export const olderThan = ({ createdAt, id }: Position) => sql<SqlBool>`(created_at <= ${createdAt} and (created_at < ${createdAt} or id < ${id}))`;
