// A batch outlives its gateway: killed (SIGKILL) mid-batch and started again, the gateway resumes
// the batch's pending lines and completes it, and no line is ever sent upstream twice. Lines that
// were running at the kill (maybe sent) fail as interrupted; their holds are ended by the recovery.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { checkAccountBalance } from '../../src/billing/accounts.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/open.js';
import { ADMIN_TOKEN, eventually } from '../helpers/gateway.js';
import { callJson, serveOnFreePort, writeServeConfig } from '../helpers/serving.js';

const RECOVERY = { heartbeat_ms: 100, dead_after_ms: 1_000, sweep_ms: 200, progress_interval_ms: 100 };
const LINES = 12;
const CREDIT = 10_000_000;

const chatLine = (i: number) => ({
  custom_id: `line-${i}`,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'sandbox-chat', messages: [{ role: 'user', content: `restart prompt ${i}` }], max_tokens: 20 },
});
const parseLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));

/** How many times the sandbox received each line's request. */
async function sentPerLine(sandbox: Sandbox): Promise<Map<string, number>> {
  const { body } = await callJson(sandbox.url, '', 'GET', '/__sandbox/requests');
  const counts = new Map<string, number>();
  for (const entry of body.data as { body: any }[]) {
    const match = /^restart prompt (\d+)$/.exec(entry.body?.messages?.[0]?.content ?? '');
    if (match) counts.set(`line-${match[1]}`, (counts.get(`line-${match[1]}`) ?? 0) + 1);
  }
  return counts;
}

describe('batches across a restart', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  test('a gateway killed mid-batch resumes it after a restart, with no line sent twice', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanups.push(() => sandbox.close());
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-batch-kill-'));
    const storeUrl = `sqlite:${path.join(dir, 'tollroute.db')}`;
    const configFile = writeServeConfig(dir, sandbox.url, storeUrl, { limits: { default_rpm: 100_000, shutdown_grace_ms: 1_000 }, recovery: RECOVERY });
    // Slow answers: lines are still running upstream when the gateway is killed.
    await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { model: 'sandbox-chat', delay_ms: 400 });

    const first = await serveOnFreePort(configFile, dir);
    const account = (await callJson(first.base, ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'batch', credit_micros: CREDIT })).body;
    const key = (await callJson(first.base, ADMIN_TOKEN, 'POST', `/admin/accounts/${account.id}/keys`, {})).body.key as string;
    const client = (base: string) => new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
    const text = `${Array.from({ length: LINES }, (_, i) => JSON.stringify(chatLine(i))).join('\n')}\n`;
    const file = await client(first.base).files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
    const batch = await client(first.base).batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    // Past the first round of lines (answered), into the second (sent, unanswered): then killed.
    await eventually(async () => [...(await sentPerLine(sandbox)).values()].length > 4, 10_000);
    first.process.child.kill('SIGKILL');
    await first.process.exited;
    const sentBeforeKill = await sentPerLine(sandbox);
    assert.ok(sentBeforeKill.size < LINES, 'killed before every line was sent');

    const second = await serveOnFreePort(configFile, dir);
    cleanups.push(async () => {
      second.process.child.kill('SIGTERM');
      await second.process.exited;
    });
    const done = await eventually(async () => {
      const current = await client(second.base).batches.retrieve(batch.id);
      return current.status === 'completed' && current;
    }, 20_000);
    const output = done.output_file_id ? parseLines(await (await client(second.base).files.content(done.output_file_id)).text()) : [];
    const errors = done.error_file_id ? parseLines(await (await client(second.base).files.content(done.error_file_id)).text()) : [];

    // Every line ended exactly once, and none was sent upstream twice.
    const sent = await sentPerLine(sandbox);
    for (const [customId, times] of sent) assert.equal(times, 1, `${customId} sent ${times} times`);
    assert.deepEqual([...output, ...errors].map((line) => line.custom_id).sort(), Array.from({ length: LINES }, (_, i) => `line-${i}`).sort());
    assert.deepEqual(done.request_counts, { total: LINES, completed: output.length, failed: errors.length });
    // The lines resumed after the restart were sent then; the interrupted ones were not sent again.
    for (const line of errors) assert.equal(line.error?.code, 'batch_line_interrupted', JSON.stringify(line));
    assert.ok(errors.length >= 1, 'a line was running at the kill');
    assert.ok(output.length > sentBeforeKill.size - errors.length, 'lines pending at the kill ran after the restart');

    // Money: every hold ended; the account paid the answered lines and nothing for the interrupted ones.
    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    await eventually(async () => {
      const open = await store.db.selectFrom('holds').select('id').where('account_id', '=', account.id).where('state', '=', 'open').execute();
      return open.length === 0;
    }, 15_000);
    const usage = await store.db.selectFrom('usage_all').select(['request_id', 'amount_micros']).where('account_id', '=', account.id).execute();
    // An interrupted line answered and settled just before the kill says so, naming its request.
    const chargedInterrupted = errors.map((line) => /\(request (req_\w+)\)/.exec(line.error.message)?.[1]).filter(Boolean);
    assert.deepEqual(usage.map((u) => u.request_id).sort(), [...output.map((line) => line.response.request_id), ...chargedInterrupted].sort());
    const check = await checkAccountBalance(store, account.id);
    const paid = usage.reduce((sum, u) => sum + u.amount_micros, 0);
    assert.deepEqual([check.consistent, check.heldMicros, check.balanceMicros], [true, 0, CREDIT - paid]);
  });
  test('a gateway stopped gracefully mid-batch lets its running lines finish, and the restart runs the rest', async () => {
    const sandbox = await startSandbox({ port: 0 });
    cleanups.push(() => sandbox.close());
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-batch-term-'));
    const storeUrl = `sqlite:${path.join(dir, 'tollroute.db')}`;
    const configFile = writeServeConfig(dir, sandbox.url, storeUrl, { limits: { default_rpm: 100_000, shutdown_grace_ms: 5_000 }, recovery: RECOVERY });
    await callJson(sandbox.url, '', 'POST', '/__sandbox/faults', { model: 'sandbox-chat', delay_ms: 400 });

    const first = await serveOnFreePort(configFile, dir);
    const account = (await callJson(first.base, ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'batch', credit_micros: CREDIT })).body;
    const key = (await callJson(first.base, ADMIN_TOKEN, 'POST', `/admin/accounts/${account.id}/keys`, {})).body.key as string;
    const client = (base: string) => new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
    const text = `${Array.from({ length: LINES }, (_, i) => JSON.stringify(chatLine(i))).join('\n')}\n`;
    const file = await client(first.base).files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
    const batch = await client(first.base).batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await eventually(async () => [...(await sentPerLine(sandbox)).values()].length > 0, 10_000);
    first.process.child.kill('SIGTERM');
    assert.equal(await first.process.exited, 0);
    assert.ok((await sentPerLine(sandbox)).size < LINES, 'stopped before every line was sent');

    const second = await serveOnFreePort(configFile, dir);
    cleanups.push(async () => {
      second.process.child.kill('SIGTERM');
      await second.process.exited;
    });
    const done = await eventually(async () => {
      const current = await client(second.base).batches.retrieve(batch.id);
      return current.status === 'completed' && current;
    }, 20_000);
    assert.deepEqual(done.request_counts, { total: LINES, completed: LINES, failed: 0 });
    const sent = await sentPerLine(sandbox);
    assert.equal(sent.size, LINES);
    for (const [customId, times] of sent) assert.equal(times, 1, `${customId} sent ${times} times`);
  });
});
