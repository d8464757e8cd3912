// One of two gateway processes cut off from PostgreSQL under traffic (a proxy between it and the
// store holds every byte both ways): it stops taking calls before the other instance may take it
// for dead, the other sweeps its holds, and once it reaches the store again the settles of the calls
// it answered meanwhile land anyway. Every answered call is billed, none twice, and the ledger sums.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/open.js';
import { ADMIN_TOKEN, eventually } from '../helpers/gateway.js';
import { dropTestSchemas, requirePostgresOrSkip, withTestSchema } from '../helpers/postgres.js';
import { callJson, serveOnFreePort, writeServeConfig } from '../helpers/serving.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const baseUrl = await requirePostgresOrSkip('a gateway process partitioned from PostgreSQL');

// Short enough for a test; the lease (dead_after_ms less a quarter) ends before the other may sweep.
const RECOVERY = { heartbeat_ms: 200, dead_after_ms: 2_000, sweep_ms: 200, settle_retry_ms: 200 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a gateway process partitioned from PostgreSQL', { skip: !baseUrl }, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  test('under traffic, every call it answered is billed once, though the other instance swept its holds', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanups.push(() => sandbox.close());
    // Each search takes a while, so calls are in flight on the cut-off instance when the store goes.
    await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { kind: 'search', delay_ms: 400 });

    const { url: storeUrl, schema } = withTestSchema(baseUrl!);
    cleanups.push(() => dropTestSchemas(baseUrl!, [schema]));
    const direct = new URL(storeUrl);
    const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    cleanups.push(() => proxy.close());
    const proxied = new URL(storeUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    proxied.searchParams.set('query_timeout_ms', '500');
    proxied.searchParams.set('connect_timeout_ms', '500');

    const logs: Record<string, () => string> = {};
    const errorLogs = () =>
      Object.values(logs).flatMap((log) =>
        log()
          .split('\n')
          .filter((line) => line.includes('"level":50')),
      );
    const settings = { limits: { default_rpm: 100_000, shutdown_grace_ms: 1_000 }, recovery: RECOVERY };
    // Each process its own data directory: its journal of settles waiting for the store is its own.
    const serve = async (store: string) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-partition-'));
      const served = await serveOnFreePort(writeServeConfig(dir, sandbox.url, store, settings), dir);
      cleanups.push(async () => {
        served.process.child.kill('SIGTERM');
        await served.process.exited;
      });
      logs[served.base] = served.process.stdout;
      return served.base;
    };
    const stable = await serve(storeUrl);
    const cutOff = await serve(proxied.toString());

    const account = (await callJson(stable, ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'partitioned', credit_micros: 1_000_000_000 })).body;
    const key = (await callJson(stable, ADMIN_TOKEN, 'POST', `/admin/accounts/${account.id}/keys`, {})).body.key as string;

    const dispatcher = new Agent({ connections: 32 });
    cleanups.push(() => dispatcher.close());
    const answered = { [stable]: 0, [cutOff]: 0 };
    let refused = 0;
    const unexpected: string[] = [];
    let running = true;
    cleanups.push(async () => {
      running = false;
    });
    const worker = async (base: string) => {
      while (running) {
        const res = await request(`${base}/v1/search`, {
          method: 'POST',
          dispatcher,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ Type: 'web', Query: 'partition' }),
        });
        const text = await res.body.text();
        if (res.statusCode === 200) answered[base]! += 1;
        else {
          if (res.statusCode === 503) refused += 1;
          else unexpected.push(`${base === cutOff ? 'cut-off' : 'stable'} instance: ${res.statusCode} ${text}`);
          await sleep(50);
        }
      }
    };
    const workers = [...Array.from({ length: 6 }, () => worker(cutOff)), ...Array.from({ length: 2 }, () => worker(stable))];

    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    const holdsIn = async (state: 'open' | 'settled' | 'released') =>
      (await store.db.selectFrom('holds').select('id').where('account_id', '=', account.id).where('state', '=', state).execute()).length;

    await sleep(1_000);
    proxy.freeze();
    // Soon unhealthy and refusing at once, never a wait on the stalled store.
    await eventually(async () => (await request(`${cutOff}/healthz`)).statusCode === 503, 5_000);
    const startedAt = Date.now();
    const { status } = await callJson(cutOff, key, 'POST', '/v1/search', { Type: 'web', Query: 'refused' });
    assert.deepEqual({ status, prompt: Date.now() - startedAt < 1_000 }, { status: 503, prompt: true });
    // The other instance takes it for dead and releases the holds of the calls it had in flight.
    await eventually(async () => (await holdsIn('released')) > 0, 15_000);
    const answeredBeforeThaw = answered[cutOff]!;

    proxy.thaw();
    await eventually(async () => (await request(`${cutOff}/healthz`)).statusCode === 200, 15_000);
    await sleep(500);
    running = false;
    await Promise.all(workers);

    // Every hold ends, and the late settles land. (A hold may stay released: one whose call the
    // store took while its answer was held, the caller having had a 503.)
    const total = answered[stable]! + answered[cutOff]!;
    const usageRows = () => store.db.selectFrom('usage_all').select(['hold_id', 'amount_micros', 'flags']).where('account_id', '=', account.id).execute();
    const usage = await eventually(async () => {
      const rows = await usageRows();
      return (await holdsIn('open')) === 0 && rows.length >= total && rows;
    }, 15_000).catch(async (error: Error) => {
      const rows = (await usageRows()).length;
      throw new Error(
        `${error.message}: ${await holdsIn('open')} holds open, ${rows} usage rows for ${total} answered calls; errors logged:\n${errorLogs().join('\n')}`,
      );
    });
    const late = usage.filter((u) => u.flags?.split(',').includes('late'));
    assert.ok(late.length > 0, 'some of its answered calls were settled after the sweep');
    assert.ok(answeredBeforeThaw > 0 && refused > 0);
    assert.deepEqual(unexpected, [], `a call the cut-off instance cannot record is refused as unavailable (503); errors logged:\n${errorLogs().join('\n')}`);
    assert.equal(usage.length, total, 'one usage row per answered call');
    assert.equal(new Set(usage.map((u) => u.hold_id)).size, total, 'no hold billed twice');
    const price = usage[0]!.amount_micros;
    assert.ok(price > 0);
    assert.ok(
      usage.every((u) => u.amount_micros === price),
      'each billed in full',
    );
    const check = await checkAccountBalance(store, account.id);
    assert.deepEqual(
      { consistent: check.consistent, held: check.heldMicros, balance: check.balanceMicros },
      { consistent: true, held: 0, balance: 1_000_000_000 - total * price },
    );
  });
});
