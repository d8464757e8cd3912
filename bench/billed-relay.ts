// The third reference of `npm run bench -- --relays`: the Fastify relay (minimal-relay.ts) plus the
// least that a gateway billing every call on SQLite has to do, written as plainly as it can be and
// with none of the gateway's code. Per call:
// - the key: its SHA-256 looked up in memory;
// - the hold: decided in memory against the account's balance less what other calls hold;
// - the settle: the answer's usage priced in integer micros, capped by the hold, and appended to a
//   journal file before the answer goes out (one write for the calls of an event-loop turn), so a
//   killed process loses no acknowledged charge;
// - the rows: written later, many calls to a transaction, into the gateway's own schema (the store
//   `tollroute migrate` makes): the hold row, its two ledger rows chained to the account's, the
//   usage row and the account's balance, by one statement a call (an INSTEAD OF trigger);
// - the request's log line, from a template, written in blocks;
// - and the small things the spec and issue 10 ask of every call: the body checked against a JSON
//   schema, a rate limit (a token bucket in memory), a deadline (a timer), the gateway's own time
//   in a histogram and in Server-Timing.
// What the gateway does beyond this (routing and failover, idempotency, the usage mover, metrics
// by label, its layers of hooks and promises) is the most a rewrite of its call path could save.
//
//   node <transpiled billed-relay.mjs> <listen port> <upstream port> <store file> <tr- key>
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { postChat, type Relay, serveUntilStopped } from './minimal-relay.js';

export interface BilledRelay extends Relay {
  /** The gateway-time histogram's counts (one more than BUCKETS_MS: the last is +Inf) and their sum. */
  calls(): { histogram: number[]; sumMs: number };
}

const ACCOUNT_ID = 'acct_billed_relay';
const KEY_ID = 'key_billed_relay';
const CREDIT_MICROS = 1_000_000_000_000_000;
/** Micros per token, in and out (the price matters only as integer work per call). */
const PRICE = { input: 1, output: 2 };
const DEADLINE_MS = 600_000;
const RATE_PER_MINUTE = 1_000_000_000;
/** Upper bounds of the gateway-time histogram, ms. */
const BUCKETS_MS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000];
const CHAT_SCHEMA = {
  body: {
    type: 'object',
    required: ['model', 'messages'],
    properties: {
      model: { type: 'string', minLength: 1 },
      messages: {
        type: 'array',
        minItems: 1,
        items: { type: 'object', required: ['role'], properties: { role: { type: 'string' }, content: {} } },
      },
      max_tokens: { type: 'integer', minimum: 1 },
      stream: { type: 'boolean' },
    },
  },
};

interface Call {
  holdId: string;
  requestId: string;
  model: string;
  heldMicros: number;
  heldAt: number;
  chargeMicros: number;
  units: string;
  upstreamMs: number;
  now: number;
}

// A hold never written alone: written with its settle, already ended (the gateway's plain call does the same).
const ROWS_SQL = `
  create temp view if not exists billed_call (hold_id, account_id, key_id, held, request_id, model, held_at, charged, units, now, upstream_ms)
    as select null, null, null, null, null, null, null, null, null, null, null where 0;
  create temp trigger if not exists billed_call_write instead of insert on billed_call begin
    insert into holds (id, account_id, key_id, amount_micros, state, request_id, model, endpoint, charged_micros, created_at, ended_at)
      values (new.hold_id, new.account_id, new.key_id, new.held, 'settled', new.request_id, new.model, 'chat.completions', new.charged, new.held_at, new.now);
    insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, created_at, prev_id)
      values (new.account_id, 'hold', -new.held, new.held, new.hold_id, new.request_id, new.model, new.held_at,
              (select last_ledger_id from accounts where id = new.account_id));
    insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, created_at, prev_id)
      values (new.account_id, 'settle', new.held - new.charged, -new.held, new.hold_id, new.request_id, new.model, new.now, last_insert_rowid());
    update accounts set balance_micros = balance_micros - new.charged, last_ledger_id = last_insert_rowid() where id = new.account_id;
    insert into usage_recent (id, account_id, key_id, hold_id, request_id, model, endpoint, units, amount_micros, created_at, upstream_ms)
      values ('u' || new.hold_id, new.account_id, new.key_id, new.hold_id, new.request_id, new.model, 'chat.completions', new.units,
              new.charged, new.now, new.upstream_ms);
  end;`;

export async function startBilledRelay(listenPort: number, upstreamPort: number, storeFile: string, key: string): Promise<BilledRelay> {
  const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 256 });
  const sqlite = new Database(storeFile);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = normal');
  sqlite.pragma('foreign_keys = ON');
  sqlite
    .prepare('insert or ignore into accounts (id, name, balance_micros, held_micros, webhook_secret, created_at) values (?, ?, ?, 0, ?, ?)')
    .run(ACCOUNT_ID, 'billed relay', CREDIT_MICROS, 'unused', Date.now());
  sqlite.exec(ROWS_SQL);
  const insertCall = sqlite.prepare('insert into billed_call values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const writeRows = sqlite.transaction((calls: Call[]) => {
    for (const c of calls) {
      insertCall.run(c.holdId, ACCOUNT_ID, KEY_ID, c.heldMicros, c.requestId, c.model, c.heldAt, c.chargeMicros, c.units, c.now, c.upstreamMs);
    }
  });

  const keys = new Map([[sha256(key), { accountId: ACCOUNT_ID, keyId: KEY_ID, tokens: RATE_PER_MINUTE, refilledAt: Date.now() }]]);
  const histogram = new Array<number>(BUCKETS_MS.length + 1).fill(0);
  let histogramSum = 0;
  const observe = (ms: number) => {
    let i = 0;
    while (i < BUCKETS_MS.length && ms > BUCKETS_MS[i]!) i++;
    histogram[i]! += 1;
    histogramSum += ms;
  };
  let balance = CREDIT_MICROS;
  let held = 0;
  const idPrefix = randomBytes(6).toString('hex');
  let idCount = 0;
  const newId = (kind: string) => `${kind}_${idPrefix}${(++idCount).toString(36)}`;

  const journalFd = openSync(`${storeFile}.journal`, 'a');
  const logFd = openSync(`${storeFile}.log`, 'a');
  const logBindings = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  let logBlock = '';
  let journalLines = '';
  let answering: (() => void)[] = [];
  let unwritten: Call[] = [];
  let turnScheduled = false;

  // Once a turn: the journal's lines in one write, then the answers let go; the rows and the log
  // block after them, off the answers' path.
  function endTurn() {
    turnScheduled = false;
    const lines = journalLines;
    const waiting = answering;
    journalLines = '';
    answering = [];
    if (lines) writeSync(journalFd, lines);
    for (const answer of waiting) answer();
    setImmediate(writeLater);
  }
  function writeLater() {
    if (unwritten.length > 0) {
      const calls = unwritten;
      unwritten = [];
      writeRows(calls);
    }
    if (logBlock) {
      writeSync(logFd, logBlock);
      logBlock = '';
    }
  }
  const inTurn = () => {
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(endTurn);
    }
  };

  const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 });
  app.post('/v1/chat/completions', { schema: CHAT_SCHEMA }, async (request, reply) => {
    const arrived = performance.now();
    const caller = keys.get(sha256(bearerOf(request.headers.authorization)));
    if (!caller) return reply.code(401).send({ error: { type: 'authentication_error', message: 'invalid key' } });
    const now = Date.now();
    caller.tokens = Math.min(RATE_PER_MINUTE, caller.tokens + ((now - caller.refilledAt) * RATE_PER_MINUTE) / 60_000);
    caller.refilledAt = now;
    if (caller.tokens < 1) return reply.code(429).send({ error: { type: 'rate_limit_error', message: 'too many requests' } });
    caller.tokens -= 1;
    const body = request.body as { model: string; messages: { content: string }[]; max_tokens?: number };
    const promptChars = body.messages.reduce((sum, m) => sum + String(m.content).length, 0);
    const heldMicros = promptChars * PRICE.input + (body.max_tokens ?? 4096) * PRICE.output;
    if (balance - held < heldMicros) return reply.code(402).send({ error: { type: 'billing_error', message: 'balance too low' } });
    held += heldMicros;
    const heldAt = Date.now();
    const started = performance.now();
    let text: string;
    let late = false;
    // The deadline's timer, set and cleared as the gateway's is; here it only marks the call (the
    // gateway aborts the upstream request), since what the relay measures is the timer's cost.
    const deadline = setTimeout(() => (late = true), DEADLINE_MS);
    try {
      text = await postChat(pool, JSON.stringify({ ...body, stream: false }));
    } catch {
      held -= heldMicros; // an upstream failure is never charged
      return reply.code(502).send({ error: { type: 'upstream_error', message: 'upstream failed' } });
    } finally {
      clearTimeout(deadline);
    }
    if (late) process.emitWarning('a call outlived its deadline');
    const upstreamMs = performance.now() - started;
    const usage = (JSON.parse(text) as { usage?: { prompt_tokens: number; completion_tokens: number } }).usage ?? { prompt_tokens: 0, completion_tokens: 0 };
    const chargeMicros = Math.min(heldMicros, usage.prompt_tokens * PRICE.input + usage.completion_tokens * PRICE.output);
    const units = `{"input_token":${usage.prompt_tokens},"output_token":${usage.completion_tokens}}`;
    const call: Call = {
      holdId: newId('hold'),
      requestId: newId('req'),
      model: body.model,
      heldMicros,
      heldAt,
      chargeMicros,
      units,
      upstreamMs,
      now: Date.now(),
    };
    held -= heldMicros;
    balance -= chargeMicros;
    journalLines += `${JSON.stringify([1, call.holdId, ACCOUNT_ID, KEY_ID, heldMicros, call.requestId, call.model, heldAt, chargeMicros, units, call.now, upstreamMs])}\n`;
    unwritten.push(call);
    await new Promise<void>((resolve) => {
      answering.push(resolve);
      inTurn();
    });
    logBlock += `{"level":30,"time":${call.now}${logBindings},"reqId":"${call.requestId}","req":{"method":"POST","url":"/v1/chat/completions"},"res":{"statusCode":200,"complete":true},"responseTimeMs":${(performance.now() - started).toFixed(3)},"holdId":"${call.holdId}","model":${JSON.stringify(call.model)},"units":${units},"chargeMicros":${chargeMicros},"msg":"request completed"}\n`;
    const ownMs = performance.now() - arrived - upstreamMs;
    observe(ownMs);
    reply.header('content-type', 'application/json').header('x-request-id', call.requestId);
    reply.header('server-timing', `gateway;dur=${ownMs.toFixed(2)}, upstream;dur=${upstreamMs.toFixed(2)}`);
    return text;
  });
  await app.listen({ port: listenPort, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  return {
    port,
    calls: () => ({ histogram: [...histogram], sumMs: histogramSum }),
    async close() {
      await Promise.all([app.close(), pool.close()]);
      writeLater();
      closeSync(journalFd);
      closeSync(logFd);
      sqlite.close();
    },
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const bearerOf = (header: string | undefined) => (header?.startsWith('Bearer ') ? header.slice(7) : '');

// Run as a script (the bench starts it as its own process).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [listen, upstream, storeFile, key] = process.argv.slice(2, 6);
  if (!Number(listen) || !Number(upstream) || !storeFile || !key) {
    process.stderr.write('usage: billed-relay <listen port> <upstream port> <store file, migrated> <tr- key>\n');
    process.exit(2);
  }
  serveUntilStopped('billed relay', await startBilledRelay(Number(listen), Number(upstream), storeFile, key));
}
