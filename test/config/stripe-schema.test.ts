// The `stripe:` section: off when absent; when given, both keys are required, and the amounts it
// bounds are whole minor units, the least no more than the most.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig, ConfigError } from '../../src/config/load.js';

const KEYS = { secret_key: 'sk_test_config', webhook_secret: 'whsec_config' };

test('without a stripe section card payments are off', () => {
  assert.equal(buildConfig({}).config.stripe, undefined);
});

test('a stripe section with its two keys takes the defaults: usd, 1 cent = 10 000 micros, 1 to 1000 units', () => {
  const { stripe } = buildConfig({ stripe: KEYS }).config;
  assert.deepEqual(
    { currency: stripe?.currency, perMinor: stripe?.micros_per_minor_unit, min: stripe?.min_amount_micros, max: stripe?.max_amount_micros },
    { currency: 'usd', perMinor: 10_000, min: 1_000_000, max: 1_000_000_000 },
  );
});

test('a stripe section without its webhook secret is refused, naming the field', () => {
  assert.throws(
    () => buildConfig({ stripe: { secret_key: 'sk_test_config' } }),
    (error: Error) => error instanceof ConfigError && /stripe\.webhook_secret/.test(error.message),
  );
});

test('a minimum above the maximum is refused, naming max_amount_micros', () => {
  assert.throws(
    () => buildConfig({ stripe: { ...KEYS, min_amount_micros: 5_000_000, max_amount_micros: 2_000_000 } }),
    (error: Error) => /stripe\.max_amount_micros: must be at least min_amount_micros/.test(error.message),
  );
});

test('a minimum that is not a whole number of cents is refused, naming min_amount_micros', () => {
  assert.throws(
    () => buildConfig({ stripe: { ...KEYS, min_amount_micros: 1_000_001 } }),
    (error: Error) => /stripe\.min_amount_micros: must be a whole number of minor units/.test(error.message),
  );
});

test('a currency in upper case is refused, naming currency', () => {
  assert.throws(
    () => buildConfig({ stripe: { ...KEYS, currency: 'USD' } }),
    (error: Error) => /stripe\.currency/.test(error.message),
  );
});
