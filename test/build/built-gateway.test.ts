// The README's first command, as the build runs it: `node dist/main.js serve` on the embedded
// defaults serves a chat call with the demo key and the console. The two builds (tsc into dist/,
// Vite into dist/dashboard/) must not overwrite each other's files.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort, type ServingProcess, startServe } from '../helpers/processes.js';

const DIST_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
// CI builds before it tests and requires this run; a developer's `npm test` without a build skips it.
const built = existsSync(DIST_MAIN);
if (!built && process.env.TOLLROUTE_REQUIRE_BUILT === '1') throw new Error('dist/main.js is missing: run `npm run build` first');

describe('the built gateway', { skip: !built && 'not built (npm run build)' }, () => {
  let serving: ServingProcess;
  let base: string;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-built-'));
    const [port, sandboxPort] = [await freePort(), await freePort()];
    // No config file: the built-in sandbox catalogue, as `npm start` runs on a fresh machine.
    serving = await startServe({ PORT: String(port), SANDBOX_PORT: String(sandboxPort), TOLLROUTE_DATA_DIR: dataDir, TOLLROUTE_CONFIG: '' }, [], {
      entry: DIST_MAIN,
    });
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    serving?.child.kill('SIGTERM');
    await serving?.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('answers a chat call with the demo key it prints', async () => {
    const key = readFileSync(path.join(dataDir, 'demo-key'), 'utf8').trim();
    assert.ok(serving.stderr().includes(key.slice(0, 9)) || serving.stdout().includes(key.slice(0, 9)), 'the banner shows the demo key');
    const res = await request(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.equal(res.statusCode, 200);
    assert.equal(((await res.body.json()) as { object: string }).object, 'chat.completion');
  });

  test('serves the console page and its script', async () => {
    const page = await request(`${base}/dashboard/`);
    assert.equal(page.statusCode, 200);
    const html = await page.body.text();
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, 'the page names its script');
    const asset = await request(`${base}${script}`);
    assert.equal(asset.statusCode, 200);
    await asset.body.dump();
  });
});
