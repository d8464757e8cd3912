#!/usr/bin/env node
// The command line: serve | sandbox | migrate | accounts … | keys … | channels … | reload
import { Command } from 'commander';
import { request } from 'undici';
import { accountsCommand, channelsCommand, keysCommand } from './cli/admin.js';
import { bufferedStdout } from './cli/log-destination.js';
import { gatewayLogger } from './cli/logger.js';
import { serve } from './cli/serve.js';
import { ConfigError, type LoadedConfig, loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { startSandbox } from './sandbox/server.js';
import { openStore, type Store } from './store/open.js';

const program = new Command('tollroute')
  .description('an AI API gateway with prepaid, metered keys')
  .option('-c, --config <file>', 'path of tollroute.yaml')
  .option('--url <url>', "the running gateway's address, for `channels` and `reload` (default: the config's host and port)");

function configOrExit(): LoadedConfig {
  try {
    return loadConfig({ file: program.opts<{ config?: string }>().config });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`tollroute: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

async function withStore<T>(work: (store: Store, config: Config) => Promise<T>): Promise<void> {
  const { config } = configOrExit();
  const store = await openStore(config.store);
  try {
    process.stdout.write(`${JSON.stringify(await work(store, config), null, 2)}\n`);
  } finally {
    await store.close();
  }
}

/**
 * A call to the running gateway's admin API, printed as JSON: at --url, else the config's host and
 * port (a wildcard host reached on loopback), with the config's admin token, which must then be set
 * (a token generated at start is known only to that process).
 */
async function callAdmin(method: 'GET' | 'POST', p: string): Promise<void> {
  const { config, adminTokenGenerated } = configOrExit();
  if (adminTokenGenerated) throw new Error("set admin_token (or TOLLROUTE_ADMIN_TOKEN) to the running gateway's admin token");
  const host = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : config.host;
  const base = program.opts<{ url?: string }>().url ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
  const res = await request(`${base.replace(/\/+$/, '')}${p}`, { method, headers: { authorization: `Bearer ${config.admin_token}` } });
  const body = (await res.body.json().catch(() => undefined)) as { error?: string } | undefined;
  if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${body?.error ?? ''}`.trim());
  process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
}

program
  .command('serve', { isDefault: true })
  .description('run the gateway')
  .action(async () => {
    const loaded = configOrExit();
    const logger = gatewayLogger(loaded.config.log_level, bufferedStdout());
    await serve(loaded, logger);
  });

program
  .command('sandbox')
  .description('run only the sandbox upstream')
  .action(async () => {
    const { config } = configOrExit();
    const sandbox = await startSandbox({ host: config.host, port: config.sandbox.port, taskMs: config.sandbox.task_ms });
    process.stderr.write(`tollroute sandbox upstream listening on ${sandbox.url}\n`);
    process.once('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
    process.once('SIGINT', () => void sandbox.close().then(() => process.exit(0)));
  });

program
  .command('migrate')
  .description('bring the store schema up to date')
  .action(() => withStore(async (store) => ({ migrated: store.dialect })));
program.addCommand(accountsCommand(withStore));
program.addCommand(keysCommand(withStore));
program.addCommand(channelsCommand(callAdmin));
program
  .command('reload')
  .description('make the running gateway read its configuration file again (as SIGHUP does); a file that fails validation is refused, naming the field')
  .action(() => callAdmin('POST', '/admin/reload'));

/** The message and the chain of causes under it: "store migration failed: could not obtain lock …". */
function describeFailure(error: unknown): string {
  const parts: string[] = [];
  for (let at: unknown = error; at !== undefined && parts.length < 5; at = at instanceof Error ? at.cause : undefined) {
    parts.push(at instanceof Error ? at.message : String(at));
  }
  return parts.join(': ');
}

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`tollroute: ${describeFailure(error)}\n`);
  process.exit(1);
});
