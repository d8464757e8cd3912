// The processes under test: one sandbox upstream, and in front of it the bare proxy (the floor)
// and the gateway, built as it ships (`dist/`), with billing, a SQLite store and info logging on.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { request } from 'undici';
import { GATEWAY_NODE_FLAGS } from '../src/cli/node-flags.js';
import { sandboxCatalogue } from '../src/config/sandbox-catalogue.js';
import { type BenchChild, freePort, ROOT, startNode } from './processes.js';
import type { TargetName } from './scenarios.js';

const CREDIT_MICROS = 1_000_000_000_000_000; // a billion units, below 2^53: no request in the run is refused for money
export const DIST_MAIN = path.join(ROOT, 'dist', 'main.js');
const BARE_PROXY = path.join(ROOT, 'bench', 'bare-proxy.ts');

export interface Targets {
  sandbox: BenchChild;
  /** The process each target's figures are about: direct is the sandbox itself. */
  processes: Record<TargetName, BenchChild>;
  urls: Record<TargetName, string>;
  gatewayKey: string;
  gatewayLogFile: string;
  /** Rejects when any process dies or the bench is interrupted: every wait races it. */
  broken: Promise<never>;
  stop(): Promise<void>;
}

/** `npm run build`, so the gateway measured is the JavaScript that ships; BENCH_SKIP_BUILD=1 skips it. */
export function buildDist(): void {
  if (process.env.BENCH_SKIP_BUILD === '1') return;
  process.stdout.write('building dist/ (npm run build; BENCH_SKIP_BUILD=1 skips this)…\n');
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`npm run build failed (${build.status ?? build.signal})`);
}

/** Where each target listens, and the files that start them: the configuration, the gateway's entry and the floor's script. */
export interface TargetFiles {
  ports: { sandbox: number; floor: number; gateway: number };
  urls: Record<TargetName, string>;
  adminToken: string;
  configFile: string;
  /** dist/main.js, through a link of its own name. */
  entry: string;
  /** The bare proxy as plain JavaScript: `node <floorScript> <port> <sandbox port>`. */
  floorScript: string;
}

/** `channelConnections`: each channel's connection limit, when a run holds more calls at once than the default allows. */
export async function prepareTargets(workDir: string, { channelConnections }: { channelConnections?: number } = {}): Promise<TargetFiles> {
  if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run npm run build (or leave BENCH_SKIP_BUILD unset)`);
  const ports = { sandbox: await freePort(), floor: await freePort(), gateway: await freePort() };
  const urls = {
    direct: `http://127.0.0.1:${ports.sandbox}`,
    floor: `http://127.0.0.1:${ports.floor}`,
    gateway: `http://127.0.0.1:${ports.gateway}`,
  };
  const adminToken = `adm-bench-${randomBytes(16).toString('hex')}`;
  const configFile = path.join(workDir, 'tollroute.json'); // JSON is YAML, so `--config` reads it
  writeFileSync(
    configFile,
    JSON.stringify({
      ...withChannelConnections(sandboxCatalogue(urls.direct), channelConnections),
      host: '127.0.0.1',
      port: ports.gateway,
      admin_token: adminToken,
      // Logging on at info, as in production; the lines go to a file.
      log_level: 'info',
      data_dir: workDir,
      store: `sqlite:${path.join(workDir, 'tollroute.db')}`,
      sandbox: { port: ports.sandbox },
      // The 1 MB prompts of the sweep are within the default body limit (10 MB); the rate limit is
      // lifted so that it never refuses the load.
      limits: { default_rpm: 1_000_000_000 },
      network: { allow_private_urls: true },
    }),
  );

  // Started through a link of its own name, so that a `pkill -f dist/main.js` meant for other
  // tollroute processes on the machine does not stop the bench's.
  const entry = path.join(workDir, 'bench-tollroute.js');
  symlinkSync(DIST_MAIN, entry);
  return { ports, urls, adminToken, configFile, entry, floorScript: transpiled(BARE_PROXY, workDir) };
}

export async function startTargets(workDir: string, interrupted: Promise<never>, options: { channelConnections?: number } = {}): Promise<Targets> {
  const { ports, urls, adminToken, configFile, entry, floorScript } = await prepareTargets(workDir, options);
  const started: BenchChild[] = [];
  const stop = async () => {
    await Promise.allSettled(started.reverse().map((child) => child.stop()));
  };
  try {
    const sandbox = await startNode('sandbox', [entry, 'sandbox', '--config', configFile]);
    started.push(sandbox);
    const floor = await startNode('bare proxy', [floorScript, String(ports.floor), String(ports.sandbox)]);
    started.push(floor);
    const gatewayLogFile = path.join(workDir, 'gateway.log');
    const gateway = await startNode('gateway', [...gatewayNodeArgs(), entry, 'serve', '--config', configFile], { stdoutFile: gatewayLogFile });
    started.push(gateway);
    const broken = Promise.race([sandbox.died, floor.died, gateway.died, interrupted]);
    broken.catch(() => {});
    const gatewayKey = await issueKey(urls.gateway, adminToken);
    return { sandbox, processes: { direct: sandbox, floor, gateway }, urls, gatewayKey, gatewayLogFile, broken, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * What the gateway's node is given: the flags it ships with (npm start, the image), then
 * BENCH_GATEWAY_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it under load.
 */
export function gatewayNodeArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  return [...GATEWAY_NODE_FLAGS, ...argsOf(env.BENCH_GATEWAY_NODE_ARGS)];
}

/** The arguments a variable of the environment lists, split at spaces (none when it is unset). */
export const argsOf = (value: string | undefined): string[] => (value ?? '').split(' ').filter(Boolean);

function withChannelConnections(catalogue: ReturnType<typeof sandboxCatalogue>, connections: number | undefined) {
  if (connections === undefined) return catalogue;
  const channels = Object.fromEntries(Object.entries(catalogue.channels ?? {}).map(([name, channel]) => [name, { ...channel, connections }]));
  return { ...catalogue, channels };
}

/**
 * A bench script as plain JavaScript in `outDir`, run by plain `node` as the gateway is: through
 * tsx its process would also hold the TypeScript loader, and its memory would not be its own. A
 * script that imports packages must land where node finds them (under the repository).
 */
export function transpiled(file: string, outDir: string): string {
  const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  // A bench file it imports (`./name.js`) is transpiled beside it, and imported as such.
  const withSiblings = outputText.replace(/from '\.\/([\w-]+)\.js'/g, (_, name: string) => {
    transpiled(path.join(path.dirname(file), `${name}.ts`), outDir);
    return `from './${name}.mjs'`;
  });
  const out = path.join(outDir, `${path.basename(file, '.ts')}.mjs`);
  writeFileSync(out, withSiblings);
  return out;
}

/** An account with ample credit and a `tr-` key for it, through the admin API as an operator would. */
export async function issueKey(gatewayUrl: string, adminToken: string): Promise<string> {
  const account = await adminCall<{ id: string }>(gatewayUrl, adminToken, '/admin/accounts', { name: 'bench', credit_micros: CREDIT_MICROS });
  const { key } = await adminCall<{ key: string }>(gatewayUrl, adminToken, `/admin/accounts/${account.id}/keys`, { name: 'bench' });
  return key;
}

/** A POST to the gateway's admin API; its JSON answer, or an error with the status and body. */
export async function adminCall<T>(gatewayUrl: string, adminToken: string, p: string, body: unknown): Promise<T> {
  const response = await request(gatewayUrl + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`POST ${p}: ${response.statusCode} ${text}`);
  return JSON.parse(text) as T;
}
