// Hot reload (admin/reload.ts, routing/table.ts) on a real `tollroute serve` process: the file is
// rewritten and POST /admin/reload, `tollroute reload` or SIGHUP applies its channels, models and
// routing; a broken file is refused naming the field; a stream that started before a reload is
// billed on the old price; and calls made while the file is reloaded again and again all succeed,
// every account's balance exactly its usage.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { ADMIN_TOKEN, eventually } from '../helpers/gateway.js';
import { runCli, type ServingProcess } from '../helpers/processes.js';
import { callJson, serveOnFreePort, writeServeConfig } from '../helpers/serving.js';

const CREDIT = 10_000_000;
const OLD_PRICE = { input_token: 2_000_000, output_token: 8_000_000 }; // the catalogue's: 2 and 8 micros a token
const NEW_PRICE = { input_token: 20_000_000, output_token: 80_000_000 };

describe('hot reload', () => {
  let sandbox: Sandbox;
  let dir: string;
  let file: string;
  let serving: ServingProcess;
  let base: string;

  /** Rewrites the config file: the sandbox catalogue, with `models` added or replaced and `settings` on top. */
  const writeConfig = ({ models = {}, channels = {}, ...settings }: Record<string, any> = {}) => {
    const catalogue = sandboxCatalogue(sandbox.url);
    writeServeConfig(dir, sandbox.url, `sqlite:${path.join(dir, 'tollroute.db')}`, {
      limits: { default_rpm: 100_000, shutdown_grace_ms: 1_000 },
      channels: { ...catalogue.channels, ...channels },
      models: { ...catalogue.models, ...models },
      ...settings,
    });
  };
  const admin = (method: string, p: string, body?: unknown) => callJson(base, ADMIN_TOKEN, method, p, body);
  const chat = (key: string, model: string, extra: Record<string, unknown> = {}) =>
    callJson(base, key, 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hello there' }], ...extra });
  /** A streamed chat call read to its end: its status, and whether it ended with its end marker. */
  const streamChat = async (key: string) => {
    const res = await request(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', stream: true, messages: [{ role: 'user', content: '[[words:20]]' }] }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text.includes('data: [DONE]') ? 'complete' : `cut short: ${text.slice(-200)}` };
  };
  const newAccount = async (name: string) => {
    const account = (await admin('POST', '/admin/accounts', { name, credit_micros: CREDIT })).body;
    const { key } = (await admin('POST', `/admin/accounts/${account.id}/keys`, {})).body;
    return { id: account.id as string, key: key as string };
  };
  const usage = async (accountId: string) => (await admin('GET', `/admin/accounts/${accountId}/usage?limit=1000`)).body.data as any[];
  const charged = (price: typeof OLD_PRICE, units: Record<string, number>) =>
    (units.input_token! * price.input_token) / 1_000_000 + (units.output_token! * price.output_token) / 1_000_000;

  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    dir = mkdtempSync(path.join(tmpdir(), 'tollroute-reload-'));
    file = path.join(dir, 'tollroute.yaml');
    writeConfig();
    ({ process: serving, base } = await serveOnFreePort(file, dir));
  });

  after(async () => {
    serving.child.kill('SIGTERM');
    await serving.exited;
    await sandbox.close();
  });

  test('a model added to the file answers once POST /admin/reload has read it, and a restart-only change is named as not applied', async () => {
    const { key } = await newAccount('added');
    assert.equal((await chat(key, 'sandbox-chat-added')).status, 400);
    writeConfig({
      models: { 'sandbox-chat-added': { type: 'chat', channel: 'sandbox-openai', upstream_model: 'sandbox-chat', price: OLD_PRICE } },
      limits: { default_rpm: 99_999, shutdown_grace_ms: 1_000 },
    });
    const reloaded = await admin('POST', '/admin/reload');
    assert.equal(reloaded.status, 200, JSON.stringify(reloaded.body));
    const models = Object.keys(sandboxCatalogue(sandbox.url).models ?? {}).length + 1;
    const channels = Object.keys(sandboxCatalogue(sandbox.url).channels ?? {}).length;
    assert.deepEqual(reloaded.body, { reloaded: true, channels, models, not_applied: ['limits.default_rpm'] });
    assert.equal((await chat(key, 'sandbox-chat-added')).status, 200);

    // `tollroute reload` asks the running gateway the same, with the file's admin token.
    const cli = await runCli(['--config', file, '--url', base, 'reload'], {});
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(JSON.parse(cli.stdout).reloaded, true);
  });

  test('a file naming an unknown channel is refused with the field named, and the running models still answer', async () => {
    const { key } = await newAccount('refused');
    writeConfig({ models: { x: { type: 'chat', channel: 'nowhere' } } });
    const refused = await admin('POST', '/admin/reload');
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /models\.x\.channel: no channel named "nowhere"/);
    assert.equal((await chat(key, 'sandbox-chat')).status, 200);
    assert.equal((await chat(key, 'sandbox-chat-added')).status, 200, 'the model of the last good file is still there');
    assert.equal((await chat(key, 'x')).status, 400);
    await eventually(() => serving.stdout().includes('models.x.channel'));
    assert.match(serving.stdout(), /configuration reload refused/);
  });

  test('after SIGHUP with a new price the next call is billed at it, while a stream started before is billed at the old one', async () => {
    const streamer = await newAccount('stream-before');
    const caller = await newAccount('call-after');
    // One slow stream: 50 ms between chunks keeps it open for seconds.
    await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { kind: 'chat', chunk_delay_ms: 50, times: 1 });
    const res = await request(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${streamer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-chat', stream: true, messages: [{ role: 'user', content: '[[words:80]]' }] }),
    });
    assert.equal(res.statusCode, 200);
    let text = '';
    let streamEnded = false;
    const streamDone = new Promise<void>((resolve, reject) => {
      res.body.on('data', (chunk: Buffer) => (text += chunk));
      res.body.on('end', () => {
        streamEnded = true;
        resolve();
      });
      res.body.on('error', reject);
    });
    await eventually(() => text.split('\n\n').length > 3);

    writeConfig({
      models: {
        'sandbox-chat': { type: 'chat', channel: 'sandbox-openai', price: NEW_PRICE },
        'sandbox-chat-hup': { type: 'chat', channel: 'sandbox-openai', upstream_model: 'sandbox-chat', price: NEW_PRICE },
      },
    });
    serving.child.kill('SIGHUP');
    // The model the new file adds says the reload has happened.
    await eventually(async () => (await callJson(base, caller.key, 'GET', '/v1/models')).body.data.some((m: { id: string }) => m.id === 'sandbox-chat-hup'));
    assert.equal(streamEnded, false, 'the stream is still running across the reload');
    assert.equal((await chat(caller.key, 'sandbox-chat')).status, 200);

    await streamDone;
    assert.match(text, /data: \[DONE\]/);
    const [after] = await usage(caller.id);
    assert.equal(after.amount_micros, charged(NEW_PRICE, after.units));
    const [streamed] = await eventually(async () => {
      const rows = await usage(streamer.id);
      return rows.length > 0 && rows;
    });
    assert.equal(streamed.amount_micros, charged(OLD_PRICE, streamed.units));
    assert.ok(streamed.units.output_token >= 80);
  });

  test('twenty callers calling while the file is reloaded five times see no failed call, and every balance is exactly its usage', async () => {
    const accounts = await Promise.all(Array.from({ length: 20 }, (_, i) => newAccount(`load-${i}`)));
    const failures: string[] = [];
    let calls = 0;
    let stop = false;
    const loop = async ({ key }: { key: string }, i: number) => {
      for (let n = 0; !stop; n++) {
        // Every other call a stream, read to its end: a reload must not cut one short.
        const stream = (n + i) % 2 === 0;
        const answer = await (stream ? streamChat(key) : chat(key, 'sandbox-chat')).catch((error: Error) => ({ status: 0, body: error.message }));
        calls++;
        if (answer.status !== 200 || answer.body === undefined || (stream && answer.body !== 'complete')) {
          failures.push(`${answer.status} ${JSON.stringify(answer.body)}`);
        }
      }
    };
    const callers = accounts.map(loop);
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      // Each reload changes the channel's pool size (a new pool; the old one retired) and the price.
      writeConfig({
        channels: { 'sandbox-openai': { kind: 'openai', base_url: sandbox.url, api_key: 'sk-sandbox', connections: 100 + round } },
        models: { 'sandbox-chat': { type: 'chat', channel: 'sandbox-openai', price: round % 2 ? OLD_PRICE : NEW_PRICE } },
      });
      const reloaded = await admin('POST', '/admin/reload');
      assert.equal(reloaded.status, 200, JSON.stringify(reloaded.body));
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    stop = true;
    await Promise.all(callers);

    assert.deepEqual(failures, []);
    assert.ok(calls >= 40, `only ${calls} calls were made`);
    for (const account of accounts) {
      const settled = await eventually(async () => {
        const view = (await admin('GET', `/admin/accounts/${account.id}`)).body;
        return view.held_micros === 0 && view;
      });
      const spent = (await usage(account.id)).reduce((sum, row) => sum + row.amount_micros, 0);
      assert.ok(spent > 0);
      assert.equal(settled.balance_micros, CREDIT - spent);
    }
  });
});
