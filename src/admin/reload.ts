// Hot reload (SIGHUP, POST /admin/reload, `tollroute reload`): the configuration file the gateway
// started with is read again and its channels, models and routing settings take over for the calls
// that start from then on (routing/table.ts says why calls in flight are not disturbed).
//
// The rest of the file (port, store, limits, admin token, webhooks, tasks…) is wired into objects
// built once at start, so it needs a restart. A file that changes some of it is still applied for
// its reloadable parts, and the answer and the log name each field that was not: refusing the
// whole file would hold back a price change for an unrelated edit the operator may mean for the
// next restart anyway.
import { isDeepStrictEqual } from 'node:util';
import { loadTokenizers } from '../billing/tokens.js';
import { ConfigError, type LoadedConfig, loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { ChannelHealth } from '../routing/breaker.js';
import { breakerSettings, buildRoutes, RELOADABLE_SECTIONS, type RoutingTable } from '../routing/table.js';
import type { ConnectionWaitObserver } from '../upstreams/pool.js';

export type ReloadOutcome =
  | { ok: true; reloaded: true; channels: number; models: number; not_applied: string[] }
  /** 400: the file is unreadable or invalid (the message names the field); 409: there is no file to read. */
  | { ok: false; status: 400 | 409; message: string };

export interface ReloadLogger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ReloaderOptions {
  /** The file the gateway started on; none when it runs on the built-in catalogue or a test's config. */
  file: string | undefined;
  /** The configuration as started, and whether its admin token was generated (a file without one). */
  running: Config;
  adminTokenGenerated: boolean;
  table: RoutingTable;
  health: ChannelHealth;
  observer?: ConnectionWaitObserver;
  log: ReloadLogger;
  /** Told of each configuration applied (serve turns the sandbox's control API off beside real channels). */
  onReloaded?(config: Config): void;
  /** The environment `${NAME}` and the per-instance variables are read from (process.env). */
  env?: Record<string, string | undefined>;
}

/** Reads the file again and applies it, or refuses it and changes nothing. Synchronous: two reloads never interleave. */
export type Reload = () => ReloadOutcome;

export function createReloader(options: ReloaderOptions): Reload {
  const { file, running, table, health, log } = options;
  return () => {
    if (file === undefined) {
      const message = 'there is no configuration file to reload: the gateway started without one';
      log.error({ error: message }, 'configuration reload refused');
      return { ok: false, status: 409, message };
    }
    let next: LoadedConfig;
    try {
      next = loadConfig({ file, env: options.env });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      log.error({ error: error.message }, 'configuration reload refused; the running configuration stays');
      return { ok: false, status: 400, message: error.message };
    }
    const { config } = next;
    // Built before the switch, as at start: a first call must not stall every connection building one.
    loadTokenizers(Object.values(config.models).map((model) => model.tokenizer));
    table.replace(buildRoutes(config, options.observer, table.current()));
    health.reconfigure(breakerSettings(config));
    options.onReloaded?.(config);
    const notApplied = unreloadedChanges(running, options.adminTokenGenerated, next);
    const outcome = { channels: Object.keys(config.channels).length, models: Object.keys(config.models).length, not_applied: notApplied };
    log.info({ file, ...outcome }, notApplied.length ? 'configuration reloaded; some changes need a restart' : 'configuration reloaded');
    return { ok: true, reloaded: true, ...outcome };
  };
}

/** The fields outside channels, models and routing whose value the file changed (named, never shown: some are secrets). */
export function unreloadedChanges(running: Config, runningTokenGenerated: boolean, next: LoadedConfig): string[] {
  const skipped = new Set<string>(RELOADABLE_SECTIONS);
  // A file without admin_token gets a new random one on every read: only a token the file sets, or
  // a set one it removes, is a change.
  if (next.adminTokenGenerated && runningTokenGenerated) skipped.add('admin_token');
  const keys = new Set([...Object.keys(running), ...Object.keys(next.config)].filter((key) => !skipped.has(key)));
  return [...keys].flatMap((key) => changedPaths((running as Record<string, unknown>)[key], (next.config as Record<string, unknown>)[key], key));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The dotted paths where two values differ, down to the leaves (a list counts as one leaf). */
function changedPaths(before: unknown, after: unknown, at: string): string[] {
  if (isDeepStrictEqual(before, after)) return [];
  if (!isObject(before) || !isObject(after)) return [at];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].flatMap((key) => changedPaths(before[key], after[key], `${at}.${key}`));
}
