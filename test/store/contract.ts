// The one store suite, run against each backend by sqlite.test.ts and postgres.test.ts.
import { describe } from 'node:test';
import { invariantContract } from '../billing/invariant-contract.js';
import { keyLimitsContract } from '../billing/key-limits-contract.js';
import { ledgerContract } from '../billing/ledger-contract.js';
import { concurrencyContract } from './concurrency-contract.js';
import { filesContract } from './files-contract.js';
import { queryContract } from './query-contract.js';
import { type StoreUrls, storePerTest } from './store-context.js';
import { testModeContract } from './test-mode-contract.js';

// makeUrl must return the URL of a new, empty database (or schema) on every call.
export function runStoreContract(label: string, makeUrl: StoreUrls, { crossProcess = true } = {}): void {
  describe(`store contract on ${label}`, () => {
    const ctx = storePerTest(makeUrl);
    queryContract(ctx);
    ledgerContract(ctx);
    invariantContract(ctx);
    keyLimitsContract(ctx);
    concurrencyContract(ctx, { crossProcess });
    filesContract(ctx);
    testModeContract(ctx);
  });
}
