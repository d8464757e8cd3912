// `tollroute serve`: the gateway (and, on the built-in catalogue, the sandbox beside it) until SIGTERM.
import type { FastifyBaseLogger } from 'fastify';
import { issueApiKey } from '../billing/api-keys.js';
import { createAccount } from '../billing/ledger.js';
import type { LoadedConfig } from '../config/load.js';
import { createGateway, type Gateway } from '../gateway.js';
import { startSandbox, type Sandbox } from '../sandbox/server.js';
import { findAccountByName } from '../store/accounts.js';
import type { Store } from '../store/open.js';

const DEMO_ACCOUNT = 'demo';
const DEMO_CREDIT_MICROS = 100_000_000; // 100 units: thousands of sandbox calls

/** A fresh key on the demo account (created with a balance on first start): keys are stored hashed, so each start issues one. */
async function demoKey(store: Store): Promise<{ key: string; accountId: string }> {
  const account = (await findAccountByName(store.db, DEMO_ACCOUNT)) ?? (await createAccount(store, { name: DEMO_ACCOUNT, creditMicros: DEMO_CREDIT_MICROS }));
  const { key } = await issueApiKey(store, { accountId: account.id, name: `demo key ${new Date().toISOString()}` });
  return { key, accountId: account.id };
}

export async function serve(loaded: LoadedConfig, logger: FastifyBaseLogger): Promise<void> {
  const { config } = loaded;
  let sandbox: Sandbox | undefined;
  if (config.sandbox.enabled) {
    sandbox = await startSandbox({ host: config.host, port: config.sandbox.port, taskMs: config.sandbox.task_ms });
  }
  const gateway: Gateway = await createGateway(config, logger);
  const url = await gateway.listen();

  const lines = [`tollroute gateway listening on ${url}`, `  configuration: ${loaded.source}`, `  store: ${config.store.replace(/\/\/[^@/]*@/, '//***@')}`];
  if (sandbox) lines.push(`  sandbox upstream on ${sandbox.url}`);
  if (loaded.adminTokenGenerated) lines.push(`  admin token (generated for this run; set TOLLROUTE_ADMIN_TOKEN to fix it): ${config.admin_token}`);
  if (loaded.source === 'built-in sandbox catalogue') {
    const demo = await demoKey(gateway.store);
    lines.push(`  demo account ${demo.accountId}, API key: ${demo.key}`);
    lines.push(`  try: curl ${url}/v1/chat/completions -H "Authorization: Bearer ${demo.key}" -H 'content-type: application/json' -d '{"model":"sandbox-chat","messages":[{"role":"user","content":"hello"}]}'`);
  }
  // A banner for the operator's terminal, kept out of the JSON logs (which never carry secrets).
  process.stderr.write(`${lines.join('\n')}\n`);

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
}
