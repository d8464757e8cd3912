// What every part of the store contract gets: a freshly migrated store per test.
import { afterEach, beforeEach } from 'node:test';
import { openStore, type Store } from '../../src/store/open.js';

export interface StoreContext {
  /** The store opened for the running test. */
  store(): Store;
  /** The URL that store was opened from (another process can open it too). */
  url(): string;
  /** A URL for a further, empty database or schema, cleaned up by the suite. */
  makeUrl(): string;
}

/**
 * Store URLs: a new, empty database or schema on every call. Where `reused` and `giveBack` are given
 * (PostgreSQL's schemas: helpers/postgres.ts), each test's store is on a migrated one a finished test
 * gave back, emptied, instead.
 */
export interface StoreUrls {
  (): string;
  reused?(): string;
  /** The store on `url` is closed: its schema is emptied for the next `reused()`, unless a test changed its tables. */
  giveBack?(url: string): Promise<void>;
}

export function storePerTest(makeUrl: StoreUrls): StoreContext {
  let current: { store: Store; url: string } | undefined;
  beforeEach(async () => {
    const url = makeUrl.reused?.() ?? makeUrl();
    current = { store: await openStore(url), url };
  });
  afterEach(async () => {
    const ended = current;
    current = undefined;
    if (!ended) return;
    await ended.store.close();
    await makeUrl.giveBack?.(ended.url);
  });
  const opened = () => {
    if (!current) throw new Error('no store: used outside a test');
    return current;
  };
  return { store: () => opened().store, url: () => opened().url, makeUrl };
}
