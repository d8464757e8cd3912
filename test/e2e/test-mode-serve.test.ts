// Test mode on `tollroute serve` with the built-in catalogue: test keys are served by the embedded
// sandbox with no test_mode setting, and the CLI issues them and tops up their balance.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { request } from 'undici';
import { ADMIN_TOKEN, eventually } from '../helpers/gateway.js';
import { freePort, runCli, startServe } from '../helpers/processes.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-testmode-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

test('the CLI issues a test key and test funds, and the embedded sandbox serves its calls on the test balance', async () => {
  const env = {
    TOLLROUTE_DATA_DIR: dataDir,
    PORT: String(await freePort()),
    SANDBOX_PORT: String(await freePort()),
    TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
  };
  const serve = await startServe(env);
  try {
    const accountId = /demo account (acct_\S+),/.exec(serve.stderr())?.[1];
    assert.ok(accountId, serve.stderr());
    const issued = await runCli(['keys', 'create', accountId, '--test', '--name', 'ci'], env);
    assert.equal(issued.code, 0, issued.stderr);
    const { key } = JSON.parse(issued.stdout);
    assert.match(key, /^tr-test-/);
    const topped = await runCli(['accounts', 'test-credit', accountId, '1000000', '--note', 'ci'], env);
    assert.equal(topped.code, 0, topped.stderr);
    assert.deepEqual(JSON.parse(topped.stdout).test_balance_micros, 1_000_000);

    const res = await request(`http://127.0.0.1:${env.PORT}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.equal(res.statusCode, 200);
    const usage = ((await res.body.json()) as any).usage;
    const charge = usage.prompt_tokens * 2 + usage.completion_tokens * 8; // sandbox-chat: 2 and 8 micros a token
    const shown = await eventually(async () => {
      const account = JSON.parse((await runCli(['accounts', 'show', accountId], env)).stdout);
      return account.test_held_micros === 0 && account;
    }, 15_000);
    assert.deepEqual([shown.balance_micros, shown.test_balance_micros], [100_000_000, 1_000_000 - charge]);
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
});
