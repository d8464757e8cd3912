// `npm run bench -- --help` lists the modes a maintainer runs, and every result says which machine made it.
import assert from 'node:assert/strict';
import os from 'node:os';
import { test } from 'node:test';
import { describeMachine, runEnvironment } from '../../bench/docs.js';
import { parseOptions, USAGE } from '../../bench/options.js';

test('--help asks for the usage, and the usage names every mode and --write-docs', () => {
  assert.equal(parseOptions(['--help']).help, true);
  assert.equal(parseOptions([]).help, false);
  for (const flag of ['--sweep', '--ledger', '--slow-streams', '--hot-account', '--compare', '--write-docs', '--only']) {
    assert.match(USAGE, new RegExp(`${flag}\\b`), flag);
  }
});

test('a flag of no mode is refused with the usage', () => {
  assert.throws(() => parseOptions(['--instructions']), /unknown argument --instructions\nusage:/);
});

test("a result's environment records the host name and the CPU model, and its description names both", () => {
  const env = runEnvironment();
  assert.equal(env.host, os.hostname());
  assert.equal(env.cpuModel, os.cpus()[0]?.model.trim());
  const line = describeMachine(env);
  assert.ok(line.includes(`host ${env.host}`), line);
  assert.ok(line.includes(env.cpuModel), line);
  if (env.cpu.family !== null) assert.ok(line.includes(`family ${env.cpu.family}`), line);
});
