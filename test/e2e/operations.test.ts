// Operating the gateway: health, metrics, logs, graceful shutdown, and the CLI on the same store.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { request } from 'undici';
import { ADMIN_AUTH, ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { freePort, runCli, startServe } from '../helpers/processes.js';

describe('health, metrics and logs', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.account());
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'one two three' }] });
    await client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }).catch(() => {});
  });
  after(() => gw.close());

  test('/healthz answers ok while the store answers', async () => {
    const res = await request(`${gw.url}/healthz`);
    assert.deepEqual({ status: res.statusCode, body: await res.body.json() }, { status: 200, body: { status: 'ok' } });
  });

  test('/metrics reports requests, latency, upstream latency and amounts billed in Prometheus format', async () => {
    const res = await request(`${gw.url}/metrics`, ADMIN_AUTH);
    const text = await res.body.text();
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    assert.match(text, /tollroute_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} 1/);
    assert.match(text, /tollroute_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="400"\} 1/);
    assert.match(text, /tollroute_http_request_duration_seconds_count\{method="POST",route="\/v1\/chat\/completions"\} 2/);
    assert.match(text, /tollroute_upstream_duration_seconds_count\{model="sandbox-chat",channel="sandbox-openai",outcome="ok"\} 1/);
    // "one two three": prompt 4 tokens × 2 + reply "Sandbox says: one two three" 5 tokens × 8
    assert.match(text, /tollroute_billed_micros_total\{model="sandbox-chat"\} 48/);
  });

  test('every log line about a request carries its request id', () => {
    const requestLines = gw.logs.filter((line) => line.req || line.res || line.holdId);
    assert.ok(requestLines.length >= 4);
    for (const line of requestLines) assert.match(String(line.reqId), /^req_/);
  });

  test('no log line carries an API key or the admin token', () => {
    assert.ok(gw.logText().length > 0);
    assert.ok(!gw.logText().includes(key));
    assert.ok(!gw.logText().includes(key.slice(3)));
    assert.ok(!gw.logText().includes(ADMIN_TOKEN));
  });

  test("the request id is always the gateway's own; a caller's x-request-id is kept beside it and echoed apart", async () => {
    const res = await request(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}`, 'x-request-id': 'trace-123' } });
    await res.body.dump();
    const own = res.headers['x-request-id'] as string;
    assert.match(own, /^req_[0-9A-Za-z]{22}$/);
    assert.equal(res.headers['x-client-request-id'], 'trace-123');
    assert.ok(gw.logs.some((line) => line.reqId === own && line.clientRequestId === 'trace-123'));
  });
  test('an upstream error body is logged once, and only its first few hundred characters', async () => {
    const marker = `ECHOED-PROMPT-${Date.now()}`;
    await gw.sandboxControl('POST', '/__sandbox/faults', {
      kind: 'chat',
      status: 500,
      body: { error: { message: `${marker} ${'x'.repeat(20_000)}` } },
      times: 1,
    });
    const res = await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 502);
    const lines = gw
      .logText()
      .split('\n')
      .filter((line) => line.includes(marker));
    assert.equal(lines.length, 1, 'one log line for the failure');
    assert.ok(lines[0]!.length < 2_000, `a ${lines[0]!.length}-character line`);
  });
});

describe('the tollroute process', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-serve-'));
  let env: Record<string, string>;
  before(async () => {
    env = {
      TOLLROUTE_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      SANDBOX_PORT: String(await freePort()),
      TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'info',
    };
  });

  test('SIGTERM stops new requests, lets a running stream finish, settles it and exits 0', async () => {
    const serve = await startServe(env);
    const base = `http://127.0.0.1:${env.PORT}`;
    const key = /API key: (tr-\S+)/.exec(serve.stderr())?.[1];
    const accountId = /demo account (acct_\S+),/.exec(serve.stderr())?.[1];
    assert.ok(key && accountId, serve.stderr());
    await request(`http://127.0.0.1:${env.SANDBOX_PORT}/__sandbox/faults`, { method: 'POST', body: JSON.stringify({ kind: 'chat', chunk_delay_ms: 25 }) });

    const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:40]]' }], stream: true });
    let text = '';
    let signalled = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (!signalled && text.length > 0) {
        signalled = true;
        serve.child.kill('SIGTERM');
        // Give the signal a moment to land, then a new request must not be served.
        await new Promise((resolve) => setTimeout(resolve, 100));
        await assert.rejects(
          request(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(async (res) => {
            await res.body.dump();
            if (res.statusCode !== 503) throw new Error('served'); // 503 on a kept-alive socket is also a refusal
            throw new Error('refused with 503');
          }),
        );
      }
    }
    assert.equal(text.trim().split(' ').length, 40, 'the running stream finished whole');
    assert.equal(await serve.exited, 0);
    // The stream's kept-alive connection closed once idle: the process did not wait out the grace period.
    assert.doesNotMatch(serve.stdout(), /still running after the grace period/);

    // The store has it: the stream was settled before the process left (read by the next start).
    const again = await startServe(env);
    try {
      const usage = await runCli(['accounts', 'usage', accountId], env);
      assert.equal(usage.code, 0, usage.stderr);
      const [record] = JSON.parse(usage.stdout).data;
      assert.deepEqual(record.units, { input_token: 2, output_token: 40 });
      const account = JSON.parse((await runCli(['accounts', 'show', accountId], env)).stdout);
      assert.equal(account.held_micros, 0);
      assert.equal(account.balance_micros, 100_000_000 - (2 * 2 + 40 * 8));
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });

  test('a second start prints the same demo key, and start-up prints no deprecation warning', async () => {
    const own = {
      ...env,
      TOLLROUTE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'tollroute-demo-')),
      PORT: String(await freePort()),
      SANDBOX_PORT: String(await freePort()),
    };
    const keys: string[] = [];
    for (let start = 0; start < 2; start++) {
      const serve = await startServe(own);
      keys.push(/API key: (tr-\S+)/.exec(serve.stderr())?.[1] ?? '');
      assert.doesNotMatch(serve.stderr(), /Deprecation|DEP\d/);
      serve.child.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
    }
    assert.match(keys[0]!, /^tr-/);
    assert.equal(keys[1], keys[0]);
  });

  test('a bad configuration file stops start-up with a message naming the field', async () => {
    const file = path.join(dataDir, 'bad.yaml');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, 'limits:\n  default_rpm: -5\n'));
    const result = await runCli(['--config', file, 'serve'], env);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /limits\.default_rpm: Number must be greater than 0/);
  });

  test('the CLI manages accounts and keys through the running gateway', async () => {
    const serve = await startServe(env);
    after(async () => {
      serve.child.kill('SIGTERM');
      await serve.exited;
    });
    const created = await runCli(['accounts', 'create', '--name', 'cli-made', '--credit', '5000'], env);
    assert.equal(created.code, 0, created.stderr);
    const account = JSON.parse(created.stdout);
    assert.deepEqual({ name: account.name, balance: account.balance_micros, held: account.held_micros }, { name: 'cli-made', balance: 5000, held: 0 });
    const credited = JSON.parse((await runCli(['accounts', 'credit', account.id, '250', '--note', 'top-up'], env)).stdout);
    assert.equal(credited.balance_micros, 5250);
    const key = JSON.parse((await runCli(['keys', 'create', account.id, '--rpm', '30'], env)).stdout);
    assert.match(key.key, /^tr-/);
    assert.equal(key.prefix, key.key.slice(0, key.prefix.length));
    const revoked = await runCli(['keys', 'revoke', key.id], env);
    assert.deepEqual(JSON.parse(revoked.stdout), { id: key.id, revoked: true });
    const again = await runCli(['keys', 'revoke', key.id], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /404 key \S+ not found or already revoked/);
    const ledger = JSON.parse((await runCli(['accounts', 'ledger', account.id], env)).stdout).data;
    assert.deepEqual(
      ledger.map((row: any) => [row.kind, row.amount_micros, row.note]),
      [
        ['credit', 250, 'top-up'],
        ['credit', 5000, null],
      ],
    );
  });
});
