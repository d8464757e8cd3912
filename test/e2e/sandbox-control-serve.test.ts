// `tollroute serve` with the sandbox enabled beside a real channel (it serves test keys): the
// sandbox's control API is off, so nobody can program it or read test calls' bodies; on the built-in
// catalogue it stays on, from loopback.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { request } from 'undici';
import { stringify } from 'yaml';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { freePort, startServe } from '../helpers/processes.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-sandbox-control-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const controlStatus = async (sandboxPort: string) => {
  const res = await request(`http://127.0.0.1:${sandboxPort}/__sandbox/requests`);
  await res.body.dump();
  return res.statusCode;
};

test('beside a real channel the embedded sandbox has no control API; on the built-in catalogue it has', async () => {
  const sandboxPort = String(await freePort());
  const catalogue = sandboxCatalogue(`http://127.0.0.1:${sandboxPort}`);
  const file = path.join(dir, 'tollroute.yaml');
  writeFileSync(
    file,
    stringify({
      ...catalogue,
      channels: { ...catalogue.channels, 'real-openai': { kind: 'openai', base_url: 'https://api.openai.com/v1', api_key: 'sk-not-used' } },
      sandbox: { enabled: true },
    }),
  );
  const env = {
    TOLLROUTE_DATA_DIR: path.join(dir, 'a'),
    PORT: String(await freePort()),
    SANDBOX_PORT: sandboxPort,
    TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
  };
  const withReal = await startServe({ ...env, TOLLROUTE_CONFIG: file });
  try {
    assert.equal(await controlStatus(sandboxPort), 404);
  } finally {
    withReal.child.kill('SIGTERM');
    await withReal.exited;
  }
  const builtIn = await startServe({ ...env, TOLLROUTE_DATA_DIR: path.join(dir, 'b') });
  try {
    assert.equal(await controlStatus(sandboxPort), 200);
  } finally {
    builtIn.child.kill('SIGTERM');
    await builtIn.exited;
  }
});

test('a reload that brings a real channel turns the embedded sandbox control API off, and forgets its request log', async () => {
  const sandboxPort = String(await freePort());
  const port = String(await freePort());
  const catalogue = sandboxCatalogue(`http://127.0.0.1:${sandboxPort}`);
  const file = path.join(dir, 'reloaded.yaml');
  writeFileSync(file, stringify({ ...catalogue, sandbox: { enabled: true } }));
  const served = await startServe({
    TOLLROUTE_DATA_DIR: path.join(dir, 'c'),
    PORT: port,
    SANDBOX_PORT: sandboxPort,
    TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    TOLLROUTE_CONFIG: file,
  });
  try {
    assert.equal(await controlStatus(sandboxPort), 200, 'on: the configuration has no real channel');
    const real = { kind: 'openai', base_url: 'https://api.openai.com/v1', api_key: 'sk-not-used' };
    writeFileSync(file, stringify({ ...catalogue, channels: { ...catalogue.channels, 'real-openai': real }, sandbox: { enabled: true } }));
    const reloaded = await request(`http://127.0.0.1:${port}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(reloaded.statusCode, 200, await reloaded.body.text());
    assert.equal(await controlStatus(sandboxPort), 404, 'off once real channels are beside it');
  } finally {
    served.child.kill('SIGTERM');
    await served.exited;
  }
});
