// `tollroute serve`: the gateway (and, on the built-in catalogue, the sandbox beside it) until
// SIGTERM; SIGHUP reloads the configuration file (admin/reload.ts).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { createAccount } from '../billing/accounts.js';
import { hashApiKey, issueApiKey } from '../billing/api-keys.js';
import type { LoadedConfig } from '../config/load.js';
import { realChannels } from '../config/real-channels.js';
import type { Config } from '../config/schema.js';
import { createGateway, type Gateway } from '../gateway.js';
import { type Sandbox, startSandbox } from '../sandbox/server.js';
import { findAccountByName } from '../store/accounts.js';
import { findApiKeyByHash } from '../store/api-keys.js';
import type { Store } from '../store/open.js';
import { boundHeapGrowth } from './heap-growth.js';

const DEMO_ACCOUNT = 'demo';
const DEMO_CREDIT_MICROS = 100_000_000; // 100 units: thousands of sandbox calls

/**
 * The demo account's key, the same on every start: the store keeps only hashes, so the key itself
 * lives in `<data_dir>/demo-key` (readable by the owner only). A key that was revoked, or belongs
 * to another store, is replaced by a new one.
 */
async function demoKey(store: Store, dataDir: string): Promise<{ key: string; accountId: string }> {
  const account = (await findAccountByName(store.db, DEMO_ACCOUNT)) ?? (await createAccount(store, { name: DEMO_ACCOUNT, creditMicros: DEMO_CREDIT_MICROS }));
  const file = path.join(dataDir, 'demo-key');
  const kept = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  const row = kept ? await findApiKeyByHash(store.db, hashApiKey(kept)) : undefined;
  if (row && row.account_id === account.id && row.revoked_at === null) return { key: kept, accountId: account.id };
  const { key } = await issueApiKey(store, { accountId: account.id, name: 'demo key' });
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, accountId: account.id };
}

export async function serve(loaded: LoadedConfig, logger: FastifyBaseLogger): Promise<void> {
  boundHeapGrowth();
  const { config } = loaded;
  let sandbox: Sandbox | undefined;
  if (config.sandbox.enabled) {
    // Beside real channels the sandbox serves test keys: nobody may program it or read their calls.
    const real = realChannels(config);
    const control = real.length > 0 ? 'off' : 'loopback';
    sandbox = await startSandbox({ host: config.host, port: config.sandbox.port, taskMs: config.sandbox.task_ms, control });
    if (control === 'off') logger.info({ realChannels: real }, 'the embedded sandbox runs with its control API off: the configuration has real channels');
  }
  const configFile = loaded.source === 'built-in sandbox catalogue' ? undefined : loaded.source;
  // A reload that brings real channels turns the control API off as a start with them would.
  const onReloaded = (next: Config) => {
    const real = realChannels(next);
    if (real.length === 0 || !sandbox) return;
    sandbox.turnControlOff();
    logger.info({ realChannels: real }, 'the embedded sandbox control API is off: the reloaded configuration has real channels');
  };
  const gateway: Gateway = await createGateway(config, logger, {
    configFile,
    adminTokenGenerated: loaded.adminTokenGenerated,
    sandboxUrl: sandbox?.url,
    onReloaded,
  });
  // Installed before the banner: a supervisor may signal as soon as it reads that we listen.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new requests, waiting for running ones');
    await gateway.close();
    await sandbox?.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  // The reload logs its outcome itself (info, or an error naming the field at fault); a listener
  // also keeps SIGHUP from ending the process, its default.
  process.on('SIGHUP', () => {
    if (stopping) return;
    try {
      gateway.reload();
    } catch (error) {
      // Not a refused file (that is logged by the reload) but a fault of ours: a signal must not end the gateway.
      logger.error({ err: error }, 'configuration reload failed');
    }
  });
  const url = await gateway.listen();

  const lines = [`tollroute gateway listening on ${url}`, `  configuration: ${loaded.source}`, `  store: ${config.store.replace(/\/\/[^@/]*@/, '//***@')}`];
  lines.push(`  console: ${url}/dashboard (operator view: ${url}/dashboard/admin)`);
  if (sandbox) lines.push(`  sandbox upstream on ${sandbox.url}`);
  if (loaded.adminTokenGenerated) lines.push(`  admin token (generated for this run; set TOLLROUTE_ADMIN_TOKEN to fix it): ${config.admin_token}`);
  if (loaded.source === 'built-in sandbox catalogue') {
    const demo = await demoKey(gateway.store, config.data_dir);
    lines.push(`  demo account ${demo.accountId}, API key: ${demo.key}`);
    lines.push(
      `  try: curl ${url}/v1/chat/completions -H "Authorization: Bearer ${demo.key}" -H 'content-type: application/json' -d '{"model":"sandbox-chat","messages":[{"role":"user","content":"hello"}]}'`,
    );
  }
  // A banner for the operator's terminal, kept out of the JSON logs (which never carry secrets).
  process.stderr.write(`${lines.join('\n')}\n`);
}
