// A list the API answers in pages ({data, next_cursor}): the page shown, and going older or back
// to newer ones. The cursors seen are kept, so "Newer" returns to exactly the page seen before.
import { useState } from 'preact/hooks';
import { api, type Page, query } from './api';
import { useLoad } from './use-load';

export const PAGE_ROWS = 50;

export interface Pages<T> {
  page: Page<T> | undefined;
  error: string | undefined;
  loading: boolean;
  /** 1 for the newest page. */
  number: number;
  older: (() => void) | undefined;
  newer: (() => void) | undefined;
}

/**
 * `filter` holds the list's query fields; a new filter starts again from the newest page. `get`
 * reads a page: the account API with the session by default (the operator's view passes its own).
 */
export function usePages<T>(
  path: string,
  filter: Record<string, string | undefined>,
  { rows = PAGE_ROWS, get = (url: string) => api<Page<T>>('GET', url) }: { rows?: number; get?: (url: string) => Promise<Page<T>> } = {},
): Pages<T> {
  const filterKey = JSON.stringify(filter);
  const [cursors, setCursors] = useState<{ filterKey: string; list: string[] }>({ filterKey, list: [] });
  const list = cursors.filterKey === filterKey ? cursors.list : [];
  const cursor = list.at(-1);
  const { data, error, loading } = useLoad(() => get(`${path}${query({ ...filter, limit: String(rows), cursor })}`), [filterKey, cursor, rows]);
  const next = data?.next_cursor ?? null;
  return {
    page: data,
    error,
    loading,
    number: list.length + 1,
    older: loading || next === null ? undefined : () => setCursors({ filterKey, list: [...list, next] }),
    newer: loading || list.length === 0 ? undefined : () => setCursors({ filterKey, list: list.slice(0, -1) }),
  };
}
