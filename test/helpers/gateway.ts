// A live gateway and sandbox on free ports, wired exactly as `tollroute serve` wires them,
// with an account, a key and the log lines captured for assertions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { gatewayLogger } from '../../src/cli/logger.js';
import { buildConfig } from '../../src/config/load.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { freePort } from './processes.js';

export const ADMIN_TOKEN = 'adm-test-token-0123456789abcdef';
/** Request options carrying the admin token (what /metrics answers to by default). */
export const ADMIN_AUTH = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };

export interface TestGateway {
  url: string;
  /** The store URL, so a second gateway can share it as a second instance would. */
  storeUrl: string;
  /** The gateway's data_dir (its journals). */
  dataDir: string;
  sandbox: Sandbox;
  gateway: Gateway;
  logs: Record<string, unknown>[];
  /** Raw log text, for checks that a secret never appears anywhere. */
  logText(): string;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** A JSON call with an API key. */
  call(key: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  /** The account once every hold has ended (settlements of streams land just after the stream). */
  settled(accountId: string): Promise<{ balance_micros: number; held_micros: number }>;
  /** A new account with `creditMicros` and a key on it. */
  account(opts?: { creditMicros?: number; rpm?: number }): Promise<{ accountId: string; key: string; keyId: string }>;
  balance(accountId: string): Promise<{ balance_micros: number; held_micros: number }>;
  sandboxControl(method: string, path: string, body?: unknown): Promise<any>;
  close(): Promise<void>;
}

/** Config overrides, or a function of the sandbox's URL for overrides that name it (channels with their own timeouts). */
export type GatewayOverrides = Partial<ConfigInput> | ((sandboxUrl: string) => Partial<ConfigInput>);

export async function startTestGateway(
  overridesOrBuild: GatewayOverrides = {},
  { sandboxTaskMs = 300 }: { sandboxTaskMs?: number } = {},
): Promise<TestGateway> {
  const sandbox = await startSandbox({ port: 0, taskMs: sandboxTaskMs });
  const overrides = typeof overridesOrBuild === 'function' ? overridesOrBuild(sandbox.url) : overridesOrBuild;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-test-'));
  const logs: Record<string, unknown>[] = [];
  let raw = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      raw += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  const { config, gateway, url } = await listeningGateway(
    (port) =>
      buildConfig({
        ...sandboxCatalogue(sandbox.url),
        port,
        tasks: { poll_interval_ms: { image: 50, video: 50, erase: 50, minutes: 50 }, tick_ms: 25, lease_ms: 5_000, submit_lease_ms: 5_000 },
        admin_token: ADMIN_TOKEN,
        data_dir: dataDir,
        network: { allow_private_urls: true },
        ...overrides,
      }).config,
    sink,
  );

  const call = async (base: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await request(base + p, {
      method: method as any,
      headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  };
  const admin = (method: string, p: string, body?: unknown) => call(url, method, p, body, { authorization: `Bearer ${ADMIN_TOKEN}` });

  return {
    url,
    storeUrl: config.store,
    dataDir,
    sandbox,
    gateway,
    logs,
    logText: () => raw,
    admin,
    call: (key, method, p, body, headers = {}) => call(url, method, p, body, { authorization: `Bearer ${key}`, ...headers }),
    settled: (accountId) =>
      eventually(async () => {
        const account = (await admin('GET', `/admin/accounts/${accountId}`)).body;
        return account.held_micros === 0 && account;
      }),
    async account({ creditMicros = 10_000_000, rpm } = {}) {
      const created = await admin('POST', '/admin/accounts', { name: 'test', credit_micros: creditMicros });
      const key = await admin('POST', `/admin/accounts/${created.body.id}/keys`, rpm ? { rpm } : {});
      return { accountId: created.body.id, key: key.body.key, keyId: key.body.id };
    },
    async balance(accountId) {
      return (await admin('GET', `/admin/accounts/${accountId}`)).body;
    },
    async sandboxControl(method, p, body) {
      return (await call(sandbox.url, method, p, body)).body;
    },
    async close() {
      await gateway.close();
      await sandbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The gateway made from `configFor(port)` and listening. A known port (not 0), so the gateway's
 * public URL (result_url, file URLs) is right; but another test process may take a free port between
 * its pick and the listen, so on EADDRINUSE the gateway is made again on another port.
 */
async function listeningGateway(configFor: (port: number) => ReturnType<typeof buildConfig>['config'], sink: Writable) {
  for (let attempt = 1; ; attempt++) {
    const config = configFor(await freePort());
    const gateway = await createGateway(config, gatewayLogger('info', sink));
    try {
      return { config, gateway, url: await gateway.listen() };
    } catch (error) {
      await gateway.close();
      if (attempt === 5 || (error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    }
  }
}

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
