// The console section of tollroute.yaml: sign-in link and session lifetimes, validated at start.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig, ConfigError } from '../../src/config/load.js';

test('sign-in links last 15 minutes and sessions 12 hours unless configured', () => {
  assert.deepEqual(buildConfig({}).config.console, { login_link_ttl_ms: 15 * 60_000, session_ttl_ms: 12 * 3_600_000 });
  assert.deepEqual(buildConfig({ console: { session_ttl_ms: 60_000 } }).config.console, { login_link_ttl_ms: 15 * 60_000, session_ttl_ms: 60_000 });
});

test('a session lifetime that is not a positive whole number stops start-up, naming the field', () => {
  assert.throws(
    () => buildConfig({ console: { session_ttl_ms: 0 } }),
    (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /console\.session_ttl_ms: Number must be greater than 0/);
      return true;
    },
  );
});

test('an unknown console option is refused, naming it', () => {
  assert.throws(() => buildConfig({ console: { session_ttl: 5 } as never }), /console: Unrecognized key\(s\) in object: 'session_ttl'/);
});
