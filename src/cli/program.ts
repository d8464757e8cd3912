// The command line: serve | sandbox | migrate | accounts … | keys … | channels … | prices … | reload
import { Command } from 'commander';
import { request } from 'undici';
import { ConfigError, type LoadedConfig, loadConfig } from '../config/load.js';
import { PACKAGE_VERSION } from '../package-version.js';
import { accountsCommand, type CallAdmin, channelsCommand, keysCommand } from './admin.js';
import { pricesCommand } from './prices-command.js';

/**
 * The `tollroute` command line, every command with its options and action; `main.ts` parses it. An
 * action imports what only it needs (the server, the store), so the other commands start quickly.
 */
export function cliProgram(): Command {
  const program = new Command('tollroute')
    .description('an AI API gateway with prepaid, metered keys')
    .version(PACKAGE_VERSION, '-V, --version', "print tollroute's version")
    .option('-c, --config <file>', 'path of tollroute.yaml')
    .option('--url <url>', "the running gateway's address, for the commands that call it (default: TOLLROUTE_URL, else the config's host and port)")
    .option('--admin-token <token>', "the running gateway's admin token (default: TOLLROUTE_ADMIN_TOKEN, else the config's admin_token)");

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

  /**
   * A call to the running gateway's admin API, printed as JSON: at --url (or TOLLROUTE_URL), else the
   * config's host and port (a wildcard host reached on loopback), with --admin-token or the config's
   * admin token, which must then be set (a token generated at start is known only to that process).
   */
  const callAdmin: CallAdmin = async (method, path, body) => {
    const opts = program.opts<{ url?: string; adminToken?: string }>();
    const { config, adminTokenGenerated } = configOrExit();
    const token = opts.adminToken ?? (adminTokenGenerated ? undefined : config.admin_token);
    if (!token) throw new Error("set --admin-token or TOLLROUTE_ADMIN_TOKEN to the running gateway's admin token");
    const host = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : config.host;
    const base = opts.url ?? process.env.TOLLROUTE_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body) headers['content-type'] = 'application/json';
    const res = await request(`${base.replace(/\/+$/, '')}${path}`, { method, headers, body: body && JSON.stringify(body) }).catch((error: Error) => {
      throw new Error(`no gateway answers at ${base} (is it running? set --url or TOLLROUTE_URL)`, { cause: error });
    });
    const answer = (await res.body.json().catch(() => undefined)) as { error?: { message?: string } | string } | undefined;
    if (res.statusCode >= 300) {
      const message = typeof answer?.error === 'string' ? answer.error : (answer?.error?.message ?? '');
      throw new Error(`${method} ${path}: ${res.statusCode} ${message}`.trim());
    }
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  };

  program
    .command('serve', { isDefault: true })
    .description('run the gateway')
    .action(async () => {
      const loaded = configOrExit();
      const [{ serve }, { gatewayLogger }, { bufferedStdout }] = await Promise.all([
        import('./serve.js'),
        import('./logger.js'),
        import('./log-destination.js'),
      ]);
      const logger = gatewayLogger(loaded.config.log_level, bufferedStdout());
      await serve(loaded, logger);
    });

  program
    .command('sandbox')
    .description('run only the sandbox upstream')
    .action(async () => {
      const { config } = configOrExit();
      const { startSandbox } = await import('../sandbox/server.js');
      const sandbox = await startSandbox({ host: config.host, port: config.sandbox.port, taskMs: config.sandbox.task_ms });
      process.stderr.write(`tollroute sandbox upstream listening on ${sandbox.url}\n`);
      process.once('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
      process.once('SIGINT', () => void sandbox.close().then(() => process.exit(0)));
    });

  program
    .command('migrate')
    .description("bring the configured store's schema up to date (a SQLite file must exist unless --create)")
    .option('--create', 'make a new SQLite file where the configuration points')
    .action(async (opts: { create?: boolean }) => {
      const { config } = configOrExit();
      const { openStore } = await import('../store/open.js');
      const store = await openStore(config.store, { mustExist: !opts.create });
      await store.close();
      process.stdout.write(`${JSON.stringify({ migrated: store.dialect })}\n`);
    });
  program.addCommand(accountsCommand(callAdmin));
  program.addCommand(keysCommand(callAdmin));
  program.addCommand(channelsCommand(callAdmin));
  program.addCommand(pricesCommand());
  program
    .command('reload')
    .description('make the running gateway read its configuration file again (as SIGHUP does); a file that fails validation is refused, naming the field')
    .action(() => callAdmin('POST', '/admin/reload'));

  return program;
}

/** The message and the chain of causes under it: "store migration failed: could not obtain lock …". */
export function describeFailure(error: unknown): string {
  const parts: string[] = [];
  for (let at: unknown = error; at !== undefined && parts.length < 5; at = at instanceof Error ? at.cause : undefined) {
    parts.push(at instanceof Error ? at.message : String(at));
  }
  return parts.join(': ');
}
