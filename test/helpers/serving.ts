// `tollroute serve` as its own process on a config file, for the tests that kill, restart or run
// several instances; and JSON calls to it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { ADMIN_TOKEN } from './gateway.js';
import { freePort, type ServingProcess, startServe } from './processes.js';

/** `dir/tollroute.yaml` (JSON is YAML): the sandbox's catalogue on `store`, the test admin token, warn logs, then `settings`. */
export function writeServeConfig(dir: string, sandboxUrl: string, store: string, settings: Record<string, unknown> = {}): string {
  const file = path.join(dir, 'tollroute.yaml');
  writeFileSync(file, JSON.stringify({ ...sandboxCatalogue(sandboxUrl), store, admin_token: ADMIN_TOKEN, log_level: 'warn', data_dir: dir, ...settings }));
  return file;
}

/** `tollroute serve --config <file>` on a free port, its data in `dir`. */
export async function serveOnFreePort(configFile: string, dir: string): Promise<{ process: ServingProcess; base: string }> {
  const port = await freePort();
  const process = await startServe({ PORT: String(port), TOLLROUTE_DATA_DIR: dir }, ['--config', configFile]);
  return { process, base: `http://127.0.0.1:${port}` };
}

/** A JSON call with a Bearer token; the answer's status and parsed body (undefined when empty). */
export async function callJson(base: string, token: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${base}${p}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}
