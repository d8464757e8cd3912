// `npm start` as an operator runs it (the build's prestart skipped: CI has built already): the
// banner on stderr, only JSON log lines on stdout, and a SIGTERM to npm that stops the gateway too.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { GATEWAY_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { freePort } from '../helpers/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const built = existsSync(path.join(ROOT, 'dist/main.js'));
if (!built && process.env.TOLLROUTE_REQUIRE_BUILT === '1') throw new Error('dist/main.js is missing: run `npm run build` first');

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket.destroy() && false));
    socket.once('error', () => resolve(true));
  });

/** The process npm started for the script: with `exec`, the gateway itself. */
const scriptChild = (npm: ChildProcess) => Number(readFileSync(`/proc/${npm.pid}/task/${npm.pid}/children`, 'utf8').trim().split(' ')[0]);

describe('npm start', { skip: !built && 'not built (npm run build)' }, () => {
  let npm: ChildProcess;
  let stdout = '';
  let stderr = '';
  let port: number;
  before(async () => {
    port = await freePort();
    const env = {
      ...process.env,
      PORT: String(port),
      SANDBOX_PORT: String(await freePort()),
      TOLLROUTE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'tollroute-npm-start-')),
      TOLLROUTE_CONFIG: '',
      LOG_LEVEL: 'info',
    };
    npm = spawn('npm', ['start', '--ignore-scripts', '--silent'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    npm.stdout!.on('data', (chunk) => (stdout += chunk));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not start: ${stderr}`)), 30_000);
      npm.stderr!.on('data', (chunk) => {
        stderr += chunk;
        if (stderr.includes('demo account') && stderr.endsWith('\n')) resolve(clearTimeout(timer));
      });
    });
    await fetch(`http://127.0.0.1:${port}/healthz`).then((res) => res.text());
  });
  after(() => npm.kill('SIGKILL'));

  test('the banner goes to stderr and names the console', () => {
    assert.match(stderr, new RegExp(`console: http://127\\.0\\.0\\.1:${port}/dashboard`));
    assert.doesNotMatch(stdout, /listening on|API key|console:/);
  });

  test('stdout carries only JSON log lines', () => {
    const lines = stdout.split('\n').filter(Boolean);
    assert.ok(lines.length > 0, 'the gateway logged something');
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
  });

  test("the gateway's node runs with the gateway node flags", () => {
    const args = readFileSync(`/proc/${scriptChild(npm)}/cmdline`, 'utf8').split('\0');
    assert.deepEqual(args.slice(1, 1 + GATEWAY_NODE_FLAGS.length + 1), [...GATEWAY_NODE_FLAGS, 'dist/main.js']);
  });

  test('a SIGTERM to npm stops the gateway: its port closes and no process is left', async () => {
    const gateway = scriptChild(npm);
    assert.match(readFileSync(`/proc/${gateway}/cmdline`, 'utf8'), /dist\/main\.js/);
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    npm.kill('SIGTERM');
    await exited;
    for (let wait = 0; wait < 100 && existsSync(`/proc/${gateway}`); wait++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(existsSync(`/proc/${gateway}`), false, `gateway ${gateway} outlived npm`);
    assert.equal(await refused(port), true);
  });
});
