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

export function storePerTest(makeUrl: () => string): StoreContext {
  let current: { store: Store; url: string } | undefined;
  beforeEach(async () => {
    const url = makeUrl();
    current = { store: await openStore(url), url };
  });
  afterEach(async () => {
    await current?.store.close();
    current = undefined;
  });
  const opened = () => {
    if (!current) throw new Error('no store: used outside a test');
    return current;
  };
  return { store: () => opened().store, url: () => opened().url, makeUrl };
}
