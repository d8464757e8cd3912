// What counts as the store failing: its own errors (SQLite codes, PostgreSQL's server classes, a
// connection its driver lost), never the same network code raised by a caller or an upstream.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStoreFault } from '../../src/store/health.js';
import { openStore } from '../../src/store/open.js';
import { freePort } from '../helpers/processes.js';

const withCode = (code: string) => Object.assign(new Error(code), { code });

test('a reset or refused connection that is not the store’s own is not a store fault', () => {
  for (const code of ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']) assert.equal(isStoreFault(withCode(code)), false, code);
});

test('SQLite codes (constraints aside) and PostgreSQL server classes of a failing store are store faults', () => {
  assert.equal(isStoreFault(withCode('SQLITE_FULL')), true);
  assert.equal(isStoreFault(withCode('SQLITE_CONSTRAINT_UNIQUE')), false);
  assert.equal(isStoreFault(withCode('53100')), true, 'disk full');
  assert.equal(isStoreFault(withCode('23505')), false, 'a unique violation is not an outage');
});

test('a PostgreSQL store that cannot be reached fails with an error marked as the store’s own', async () => {
  const port = await freePort(); // nothing listens there
  const failure = await openStore(`postgres://postgres@127.0.0.1:${port}/test`).then(
    () => assert.fail('opened a store on a closed port'),
    (error: Error) => error,
  );
  let cause: unknown = failure;
  while (cause instanceof Error && !isStoreFault(cause) && cause.cause) cause = cause.cause;
  assert.equal(isStoreFault(cause), true, String(failure));
  assert.equal((cause as { code?: string }).code, 'ECONNREFUSED');
});
