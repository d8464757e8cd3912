// The bench's billed relay does the least a gateway billing each call on SQLite must: the key
// checked, the hold decided in memory, the charge journaled before the answer goes out, and the
// call's rows written into the gateway's own schema, with the ledger adding up.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { startBilledRelay } from '../../bench/billed-relay.js';
import { transpiled } from '../../bench/targets.js';
import { openStore } from '../../src/store/open.js';

const KEY = 'tr-billed-relay-test-key';
const CREDIT = 1_000_000_000_000_000;
const ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }],
  usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 },
};
let upstream: http.Server;
let upstreamPort = 0;
let failUpstream = false;
let dir = '';

before(async () => {
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (failUpstream) res.writeHead(500).end('{"error":"down"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ANSWER));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as AddressInfo).port;
  dir = mkdtempSync(path.join(os.tmpdir(), 'billed-relay-'));
});
after(() => {
  upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A store with the gateway's schema, as `tollroute migrate` makes it. */
async function migratedStore(name: string): Promise<string> {
  const file = path.join(dir, name);
  const store = await openStore(`sqlite:${file}`);
  await store.close();
  return file;
}

const chat = (port: number, key = KEY) =>
  request(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 }),
  });

test("the billed relay answers with the upstream's JSON and writes the call's hold, ledger, usage and balance", async () => {
  failUpstream = false;
  const file = await migratedStore('answered.db');
  const relay = await startBilledRelay(0, upstreamPort, file, KEY);
  const response = await chat(relay.port);
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['server-timing']), /^gateway;dur=\d+\.\d\d, upstream;dur=\d+\.\d\d$/);
  assert.deepEqual(await response.body.json(), ANSWER);
  assert.equal(
    relay.calls().histogram.reduce((sum, count) => sum + count, 0),
    1,
  );
  await relay.close();

  const charge = 7 * 1 + 5 * 2; // its price: 1 micro a token in, 2 out
  const db = new Database(file, { readonly: true });
  try {
    const hold = db.prepare('select state, amount_micros, charged_micros from holds').all() as {
      state: string;
      amount_micros: number;
      charged_micros: number;
    }[];
    assert.deepEqual(hold.length, 1);
    assert.equal(hold[0]!.state, 'settled');
    assert.equal(hold[0]!.charged_micros, charge);
    assert.ok(hold[0]!.amount_micros >= charge);
    const ledger = db.prepare('select kind, balance_delta_micros + held_delta_micros as moved from ledger order by id').all() as {
      kind: string;
      moved: number;
    }[];
    assert.deepEqual(
      ledger.map((row) => row.kind),
      ['hold', 'settle'],
    );
    const account = db.prepare('select balance_micros, held_micros from accounts').get() as { balance_micros: number; held_micros: number };
    assert.equal(account.balance_micros, CREDIT - charge);
    assert.equal(account.held_micros, 0);
    assert.equal(
      ledger.reduce((sum, row) => sum + row.moved, 0),
      -charge,
    );
    const usage = db.prepare('select units, amount_micros from usage_recent').get() as { units: string; amount_micros: number };
    assert.deepEqual(JSON.parse(usage.units), { input_token: 7, output_token: 5 });
    assert.equal(usage.amount_micros, charge);
  } finally {
    db.close();
  }
  assert.equal(readFileSync(`${file}.journal`, 'utf8').trim().split('\n').length, 1);
});

test('the billed relay refuses another key with 401, a body without messages with 400, and charges nothing for a failed upstream', async () => {
  const file = await migratedStore('refused.db');
  const relay = await startBilledRelay(0, upstreamPort, file, KEY);
  try {
    const stranger = await chat(relay.port, 'tr-someone-else');
    assert.equal(stranger.statusCode, 401);
    await stranger.body.dump();
    const invalid = await request(`http://127.0.0.1:${relay.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: 'sandbox-chat' }),
    });
    assert.equal(invalid.statusCode, 400);
    await invalid.body.dump();
    failUpstream = true;
    const failed = await chat(relay.port);
    assert.equal(failed.statusCode, 502);
    await failed.body.dump();
  } finally {
    failUpstream = false;
    await relay.close();
  }
  const db = new Database(file, { readonly: true });
  try {
    assert.equal((db.prepare('select count(*) as n from ledger').get() as { n: number }).n, 0);
    assert.equal((db.prepare('select balance_micros from accounts').get() as { balance_micros: number }).balance_micros, CREDIT);
  } finally {
    db.close();
  }
});

test('the billed relay runs as plain JavaScript beside the minimal relay it imports', () => {
  const outDir = path.join(dir, 'transpiled');
  mkdirSync(outDir);
  const script = transpiled(fileURLToPath(new URL('../../bench/billed-relay.ts', import.meta.url)), outDir);
  assert.match(readFileSync(script, 'utf8'), /from '\.\/minimal-relay\.mjs'/);
  assert.ok(existsSync(path.join(outDir, 'minimal-relay.mjs')));
});
