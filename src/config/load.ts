// Reads tollroute.yaml (or the built-in sandbox catalogue), applies the environment, validates.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ZodError } from 'zod';
import { sandboxCatalogue } from './sandbox-catalogue.js';
import { type Config, type ConfigInput, ConfigSchema } from './schema.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadedConfig {
  config: Config;
  source: string; // the file read, or 'built-in sandbox catalogue'
  adminTokenGenerated: boolean;
}

type Env = Record<string, string | undefined>;

/** `${NAME}` in any string value is replaced by the environment variable; a missing one is an error naming the field. */
function substituteEnv(value: unknown, env: Env, at: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name];
      if (found === undefined) throw new ConfigError(`${at.join('.')}: environment variable ${name} is not set`);
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => substituteEnv(item, env, [...at, String(i)]));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, env, [...at, k])]));
  }
  return value;
}

function describeZodError(error: ZodError, source: string): string {
  const lines = error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return `invalid configuration in ${source}:\n${lines.join('\n')}`;
}

const intFromEnv = (env: Env, name: string): number | undefined => {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name}: expected a whole number, got "${raw}"`);
  return Number(raw);
};

/** A section of the file as an object to add to (absent, or not an object, is left to validation to name). */
const section = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {});

/** Environment variables win over the file for the things an operator sets per instance. */
function applyEnv(input: Record<string, unknown>, env: Env): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...input };
  if (env.HOST) merged.host = env.HOST;
  const port = intFromEnv(env, 'PORT');
  if (port !== undefined) merged.port = port;
  if (env.LOG_LEVEL) merged.log_level = env.LOG_LEVEL;
  if (env.TOLLROUTE_DATA_DIR) merged.data_dir = env.TOLLROUTE_DATA_DIR;
  if (env.TOLLROUTE_ADMIN_TOKEN) merged.admin_token = env.TOLLROUTE_ADMIN_TOKEN;
  if (env.TOLLROUTE_STORE) merged.store = env.TOLLROUTE_STORE;
  if (env.TOLLROUTE_PUBLIC_URL) merged.public_url = env.TOLLROUTE_PUBLIC_URL;
  const sandboxPort = intFromEnv(env, 'SANDBOX_PORT');
  const taskMs = intFromEnv(env, 'SANDBOX_TASK_MS');
  if (sandboxPort !== undefined || taskMs !== undefined) {
    merged.sandbox = { ...section(merged.sandbox), ...(sandboxPort !== undefined && { port: sandboxPort }), ...(taskMs !== undefined && { task_ms: taskMs }) };
  }
  if (env.TOLLROUTE_WEBHOOK_RETRY_DELAYS_MS) {
    const delays = env.TOLLROUTE_WEBHOOK_RETRY_DELAYS_MS.split(',').map((part) => Number(part.trim()));
    if (delays.some((d) => !Number.isInteger(d) || d <= 0)) {
      throw new ConfigError('TOLLROUTE_WEBHOOK_RETRY_DELAYS_MS: expected positive whole numbers separated by commas');
    }
    merged.webhooks = { ...section(merged.webhooks), retry_delays_ms: delays };
  }
  return merged;
}

/** Validates a configuration object (from a file, the catalogue or a test) and fills defaults. */
export function buildConfig(input: ConfigInput | Record<string, unknown>, source = 'configuration'): { config: Config; adminTokenGenerated: boolean } {
  let parsed: ReturnType<typeof ConfigSchema.parse>;
  try {
    parsed = ConfigSchema.parse(input);
  } catch (error) {
    if (error instanceof ZodError) throw new ConfigError(describeZodError(error, source));
    throw error;
  }
  const adminTokenGenerated = !parsed.admin_token;
  const config = {
    ...parsed,
    admin_token: parsed.admin_token ?? `adm-${randomBytes(24).toString('base64url')}`,
    store: parsed.store ?? `sqlite:${path.join(parsed.data_dir, 'tollroute.db')}`,
    public_url: (parsed.public_url ?? `http://${parsed.host}:${parsed.port}`).replace(/\/+$/, ''),
  };
  return { config: Object.freeze(config) as Config, adminTokenGenerated };
}

export function loadConfig(options: { file?: string; env?: Env; cwd?: string } = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.file ?? env.TOLLROUTE_CONFIG;
  const file = explicit ?? (existsSync(path.join(cwd, 'tollroute.yaml')) ? 'tollroute.yaml' : undefined);

  if (!file) {
    const sandboxPort = intFromEnv(env, 'SANDBOX_PORT') ?? 8081;
    const host = env.HOST ?? '127.0.0.1';
    const input = applyEnv(
      {
        ...sandboxCatalogue(`http://${host}:${sandboxPort}`),
        sandbox: { enabled: true, port: sandboxPort },
        // The sandbox runs on loopback, and its tasks call back to local receivers.
        network: { allow_private_urls: true },
      },
      env,
    );
    return { ...buildConfig(input, 'the built-in sandbox catalogue'), source: 'built-in sandbox catalogue' };
  }

  const fullPath = path.resolve(cwd, file);
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(fullPath, 'utf8')) ?? {};
  } catch (error) {
    throw new ConfigError(`cannot read configuration ${fullPath}: ${(error as Error).message}`);
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${fullPath}: expected a YAML mapping at the top level`);
  const input = applyEnv(substituteEnv(raw, env, []) as Record<string, unknown>, env);
  return { ...buildConfig(input, fullPath), source: fullPath };
}
