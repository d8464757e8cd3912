// The property tests' side of the wire: one live gateway per file, one keep-alive undici pool,
// and the checks every refused request must pass — a 4xx in the spec's error shape, the field at
// fault named, and the account's money untouched (its ledger holds only the opening credit).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { Pool } from 'undici';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** One generated request, invalid by construction, and what its refusal must say. */
export interface Probe {
  /** Endpoint and mutation, for the failure report. */
  label: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  /** Raw bytes or text; built lazily for large bodies so a counterexample prints short. */
  body?: string | Buffer | (() => Buffer);
  /** Sent without a length, in chunks (Transfer-Encoding: chunked). */
  chunked?: boolean;
  /** Bytes written as they are on a new connection (malformed HTTP); method, path and headers unused. */
  wire?: Buffer;
  /** With `wire`: the caller leaves after writing (reset, or closed), so no answer is read; the gateway must stay healthy. */
  leaves?: 'reset' | 'close';
  expect: Expect;
}

export interface Expect {
  /** Allowed statuses (default: 400). */
  status?: readonly number[];
  /** The message must contain one of these (the field's path, its last segment, the header…). */
  names?: readonly string[];
  /** Or equal one of these exactly (the spec's fixed texts). */
  exact?: readonly string[];
}

const TYPE_OF_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'auth_error',
  402: 'billing_error',
  404: 'not_found_error',
  408: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  431: 'invalid_request_error',
};

const ANSWER_TIMEOUT_MS = 8_000;
export const SEED = Number(process.env.PROPS_SEED ?? 20_260_101);
const OPENING_CREDIT_MICROS = 10_000_000;

/** A probe printed in a counterexample: its label, request line and a short view of its body. */
export function probe(p: Probe): Probe {
  return Object.assign(p, {
    [fc.toStringMethod]: () => {
      const body = typeof p.body === 'function' ? `<${p.body().length} bytes>` : p.body === undefined ? '' : String(p.body).slice(0, 300);
      return `${p.label}: ${p.method} ${p.path} ${JSON.stringify(p.headers)} ${body}`;
    },
  });
}

export interface PropertyGateway {
  gw: TestGateway;
  /** Requests sent so far by this file. */
  sent(): number;
  check(p: Probe): Promise<void>;
  /**
   * On a new account (so one property's failure cannot spill into the next), runs `numRuns` batches
   * of `batch` probes in parallel, then checks that nothing was held or charged.
   */
  run(name: string, probes: (account: { key: string; accountId: string }) => fc.Arbitrary<Probe>, opts: { numRuns: number; batch?: number }): Promise<void>;
  close(): Promise<void>;
}

// Small limits, so bodies and uploads past them are cheap to send.
export const BODY_LIMIT_BYTES = 64 * 1024;
export const UPLOAD_LIMIT_BYTES = 48 * 1024;

export async function startPropertyGateway(): Promise<PropertyGateway> {
  const gw = await startTestGateway({
    // The per-address limit on failed authentication is off: every probe comes from 127.0.0.1, and
    // past it the address is refused whole (429), hiding what each later request itself gets.
    limits: { body_limit_bytes: BODY_LIMIT_BYTES, upload_limit_bytes: UPLOAD_LIMIT_BYTES, auth_failures_per_minute: 0 },
  });
  // A request the gateway never answers fails its property instead of hanging the run.
  const pool = new Pool(gw.url, { connections: 6, keepAliveTimeout: 30_000, headersTimeout: ANSWER_TIMEOUT_MS, bodyTimeout: ANSWER_TIMEOUT_MS });
  let sent = 0;

  async function send(p: Probe): Promise<{ statusCode: number; contentType: string; text: string }> {
    if (p.wire) return exchange(gw.url, p.wire);
    const bytes = typeof p.body === 'function' ? p.body() : p.body;
    const body = p.chunked && bytes !== undefined ? Readable.from(inChunks(Buffer.from(bytes)), { objectMode: false }) : bytes;
    const res = await pool.request({ method: p.method, path: p.path, headers: p.headers, body });
    return { statusCode: res.statusCode, contentType: String(res.headers['content-type']), text: await res.body.text() };
  }

  async function check(p: Probe): Promise<void> {
    sent += 1;
    if (p.wire && p.leaves) {
      await leave(gw.url, p.wire, p.leaves);
      const health = await pool.request({ method: 'GET', path: '/healthz' });
      assert.equal(health.statusCode, 200, `unhealthy after a caller left (${p.label}): ${await health.body.text()}`);
      await health.body.dump();
      return;
    }
    const res = await send(p).catch((error: Error & { code?: string }) => {
      throw new assert.AssertionError({ message: `no answer (${error.code} ${error.message}): ${p.label}` });
    });
    const { text } = res;
    const where = `${p.label} → ${res.statusCode} ${text.slice(0, 300)}`;
    assert.ok(res.statusCode < 500, `a 5xx: ${where}`);
    assert.ok((p.expect.status ?? [400]).includes(res.statusCode), `status ${res.statusCode}, expected ${(p.expect.status ?? [400]).join('/')}: ${where}`);
    assert.match(res.contentType, /^application\/json/, `not JSON: ${where}`);
    let parsed: unknown;
    assert.doesNotThrow(() => (parsed = JSON.parse(text)), `unparsable body: ${where}`);
    const answer = parsed as { error: unknown; type: unknown };
    assert.deepEqual(Object.keys(answer).sort(), ['error', 'type'], `not the error shape: ${where}`);
    assert.equal(typeof answer.error, 'string', where);
    assert.equal(answer.type, TYPE_OF_STATUS[res.statusCode], `type for ${res.statusCode}: ${where}`);
    const message = answer.error as string;
    const { names, exact } = p.expect;
    if (names || exact) {
      const named = (names ?? []).some((n) => message.includes(n)) || (exact ?? []).includes(message);
      assert.ok(named, `message names none of ${JSON.stringify([...(names ?? []), ...(exact ?? [])])}: ${where}`);
    }
  }

  async function assertNoMoneyMoved(name: string, accountId: string) {
    const ledger = await gw.admin('GET', `/admin/accounts/${accountId}/ledger`);
    const rows = ledger.body.data as { kind: string; amount_micros: number }[];
    assert.deepEqual(
      rows.map((r) => [r.kind, r.amount_micros]),
      [['credit', OPENING_CREDIT_MICROS]],
      `${name}: the ledger moved: ${JSON.stringify(rows.slice(0, 4))}`,
    );
    const account = (await gw.admin('GET', `/admin/accounts/${accountId}`)).body;
    assert.deepEqual(
      { balance: account.balance_micros, held: account.held_micros },
      { balance: OPENING_CREDIT_MICROS, held: 0 },
      `${name}: balance or hold moved`,
    );
  }

  return {
    gw,
    sent: () => sent,
    check,
    async run(name, probes, { numRuns, batch = 6 }) {
      // A limit no property run reaches: a 429 here would hide what the request itself gets.
      const { key, accountId } = await gw.account({ creditMicros: OPENING_CREDIT_MICROS, rpm: 100_000_000 });
      const arb = probes({ key, accountId });
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(arb, { minLength: batch, maxLength: batch }), async (probes) => {
            await Promise.all(probes.map(check));
          }),
          { seed: SEED, numRuns, endOnFailure: false },
        );
      } catch (error) {
        // The first failing request's own assertion, and where fast-check found it; the whole batch is in `cause`.
        const { message, cause } = error as Error & { cause?: Error };
        const where = /\{ seed: [^}]*\}/.exec(message)?.[0] ?? '';
        throw new Error(`${name}: ${cause?.message ?? message}\n${where} (replay with PROPS_SEED=${SEED})`, { cause: error });
      }
      await assertNoMoneyMoved(name, accountId);
    },
    async close() {
      await pool.close();
      await gw.close();
    },
  };
}

/** Writes `bytes` on a new connection and reads the answer until the server closes it. */
function exchange(url: string, bytes: Buffer): Promise<{ statusCode: number; contentType: string; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.end(bytes));
    socket.setTimeout(ANSWER_TIMEOUT_MS, () => socket.destroy(new Error('no answer before the timeout')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' && chunks.length > 0 ? undefined : reject(error)));
    socket.on('close', () => {
      const answer = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = answer.split('\r\n\r\n');
      const statusCode = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const contentType = /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1] ?? '';
      if (statusCode === 0) reject(new Error(`not an HTTP answer: ${JSON.stringify(answer.slice(0, 100))}`));
      else resolve({ statusCode, contentType, text: rest.join('\r\n\r\n') });
    });
  });
}

/** Writes `bytes` on a new connection, then leaves without waiting for an answer. */
function leave(url: string, bytes: Buffer, how: 'reset' | 'close'): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      // A moment for the gateway to start reading the body it will never get whole.
      socket.write(bytes, () => setTimeout(() => (how === 'reset' ? socket.resetAndDestroy() : socket.end()), 10));
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.resume();
  });
}

async function* inChunks(bytes: Buffer) {
  for (let at = 0; at < bytes.length; at += 16_384) yield bytes.subarray(at, at + 16_384);
}

/** Headers for a JSON call with the property account's key. */
export const jsonHeaders = (key: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  ...extra,
});
export const adminHeaders = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${ADMIN_TOKEN}`, ...extra });

/** One property: a test named `name` running `numRuns` batches of the probes it builds for its account. */
export interface PropertySpec {
  name: string;
  probes: (account: { key: string; accountId: string }) => fc.Arbitrary<Probe>;
  numRuns: number;
}

/**
 * A test file: one gateway for all its groups of properties (starting one costs seconds of this
 * machine's two cores), a test per property, and the line with the count of requests it generated.
 */
export function describeProperties(file: string, groups: Record<string, PropertySpec[]>) {
  describe(`properties: ${Object.keys(groups).join('; ')}`, () => {
    let pg: PropertyGateway;
    const startedAt = performance.now();
    before(async () => {
      pg = await startPropertyGateway();
    });
    after(async () => {
      console.log(`property requests generated (${file}): ${pg.sent()} in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
      await pg.close();
    });
    for (const [group, specs] of Object.entries(groups)) {
      for (const { name, probes, numRuns } of specs) {
        test(`${group}: ${name}, and nothing is held or charged`, async () => {
          await pg.run(`${group}: ${name}`, probes, { numRuns, batch: 6 });
        });
      }
    }
  });
}
