// Two gateway processes on one PostgreSQL: the ledger holds across instances, not just threads.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { chatPromptTokens } from '../../src/billing/estimates.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/open.js';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';
import { freePort, type ServingProcess, startServe } from '../helpers/processes.js';
import { writeServeConfig } from '../helpers/serving.js';

const baseUrl = await requirePostgresOrSkip('PostgreSQL multi-instance gateway tests');

describe('two gateway processes on one PostgreSQL', { skip: !baseUrl }, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('200 simultaneous calls on an account that can afford 100 give exactly 100 answers and 100 refusals', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanups.push(() => sandbox.close());
    // Every upstream call takes a while (8 s: even on a busy machine), so all 200 holds are placed before any is settled.
    await request(`${sandbox.url}/__sandbox/faults`, { method: 'POST', body: JSON.stringify({ kind: 'chat', delay_ms: 8000 }) });

    const { url: storeUrl, schema } = withTestSchema(baseUrl!);
    cleanups.push(() => dropTestSchemas(baseUrl!, [schema]));
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-pg-'));
    // The same catalogue the sandbox serves, on the shared store.
    const configFile = writeServeConfig(dir, sandbox.url, storeUrl, { limits: { default_rpm: 100_000 } });

    const ports = [await freePort(), await freePort()];
    const instances: ServingProcess[] = [];
    for (const port of ports) {
      const instance = await startServe({ PORT: String(port), TOLLROUTE_DATA_DIR: dir }, ['--config', configFile]);
      instances.push(instance);
      cleanups.push(async () => {
        instance.child.kill('SIGTERM');
        await instance.exited;
      });
    }

    const messages = [{ role: 'user', content: 'share the load' }];
    const sandboxChat = { id: 'sandbox-chat', config: { tokenizer: 'o200k_base', image_input_tokens: 1_600, max_output_tokens: 4_096 } } as const;
    const holdMicros = chatPromptTokens({ messages }, sandboxChat) * 2 + 10 * 8; // max_tokens 10 at the sandbox-chat prices
    const admin = async (port: number, p: string, body: unknown) => {
      const res = await request(`http://127.0.0.1:${port}${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.body.json()) as any;
    };
    const account = await admin(ports[0]!, '/admin/accounts', { name: 'shared', credit_micros: 100 * holdMicros });
    const { key } = await admin(ports[1]!, `/admin/accounts/${account.id}/keys`, {});

    const dispatcher = new Agent({ connections: 200 });
    cleanups.push(() => dispatcher.close());
    const statuses = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const res = await request(`http://127.0.0.1:${ports[i % 2]}/v1/chat/completions`, {
          method: 'POST',
          dispatcher,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sandbox-chat', messages, max_tokens: 10 }),
        });
        await res.body.dump();
        return res.statusCode;
      }),
    );
    assert.deepEqual({ ok: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 402).length }, { ok: 100, refused: 100 });

    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    const check = await checkAccountBalance(store, account.id);
    assert.equal(check.consistent, true);
    assert.equal(check.heldMicros, 0);
    assert.ok(check.balanceMicros >= 0, 'never a negative spendable balance');
  });
});
