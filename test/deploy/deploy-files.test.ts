// The Dockerfile and compose.yaml name only commands, ports, environment variables and routes that
// the gateway has: each is read from the source, so a rename there fails here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { GATEWAY_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { cliProgram } from '../../src/cli/program.js';
import { ConfigSchema } from '../../src/config/schema.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

function sourceText(dir: string): string {
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .map((path) => (statSync(path).isDirectory() ? sourceText(path) : path.endsWith('.ts') ? readFileSync(path, 'utf8') : ''))
    .join('\n');
}
const src = sourceText(join(root, 'src'));

const subcommands = new Set(cliProgram().commands.map((command) => command.name()));
const scripts = new Set(Object.keys(JSON.parse(read('package.json')).scripts));
const routes = new Set([...src.matchAll(/app\.get\('([^']+)'/g)].map((m) => m[1] ?? ''));
const defaults = ConfigSchema.parse({});
const listenPorts = new Set([defaults.port, defaults.sandbox.port]);

/** Instructions of the Dockerfile, continuation lines joined. */
const dockerfile = read('Dockerfile')
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
  .map((line) => {
    const [word, ...rest] = line.trim().split(/\s+/);
    return { word: (word ?? '').toUpperCase(), args: rest.join(' ') };
  });
const lastFrom = dockerfile.map((line) => line.word).lastIndexOf('FROM');
const runtime = dockerfile.slice(lastFrom);

type Service = { command?: string[]; environment?: Record<string, string>; ports?: string[]; expose?: string[]; image?: string };
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
const ownServices = Object.entries(compose.services).filter(([, service]) => service.image?.startsWith('tollroute'));

/** `node dist/main.js <subcommand>`, and for `serve` the gateway's node flags (src/cli/node-flags.ts) before dist/main.js. */
function assertGatewayCommand(words: string[]): void {
  const subcommand = words.at(-1) ?? '';
  const flags = subcommand === 'serve' ? GATEWAY_NODE_FLAGS : [];
  assert.deepEqual(words, ['node', ...flags, 'dist/main.js', subcommand], `expected ${['node', ...flags, 'dist/main.js', subcommand].join(' ')}`);
  assert.ok(subcommands.has(subcommand), `${subcommand} is not a command of the tollroute command line (${[...subcommands].join(', ')})`);
}

function assertEnvironmentVariableRead(name: string): void {
  const read = src.includes(`env.${name}`) || src.includes(`'${name}'`);
  assert.ok(read, `${name} is not read anywhere in src/`);
}

describe('the Dockerfile', () => {
  test('runs only npm scripts that package.json defines', () => {
    const named = dockerfile.filter((line) => line.word === 'RUN').flatMap((line) => [...line.args.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1] ?? ''));
    assert.ok(named.length > 0, 'the Dockerfile builds with npm run');
    for (const script of named) assert.ok(scripts.has(script), `npm script ${script} does not exist`);
  });

  test('starts the gateway with a subcommand the command line has', () => {
    const cmd = runtime.find((line) => line.word === 'CMD');
    assert.ok(cmd, 'the runtime stage has a CMD');
    assertGatewayCommand(JSON.parse(cmd.args));
  });

  test('exposes only ports the gateway or its sandbox listen on by default', () => {
    const exposed = runtime.filter((line) => line.word === 'EXPOSE').flatMap((line) => line.args.split(/\s+/).map(Number));
    assert.ok(exposed.length > 0, 'the runtime stage exposes a port');
    for (const port of exposed) assert.ok(listenPorts.has(port), `port ${port} is not a default listening port`);
  });

  test('sets only environment variables that the source reads', () => {
    const names = dockerfile.filter((line) => line.word === 'ENV').flatMap((line) => [...line.args.matchAll(/([A-Z_][A-Z0-9_]*)=/g)].map((m) => m[1] ?? ''));
    for (const name of names.filter((name) => name !== 'NODE_ENV')) assertEnvironmentVariableRead(name);
  });

  test('runs its runtime stage as a user other than root', () => {
    const user = runtime.filter((line) => line.word === 'USER').at(-1);
    assert.ok(user, 'the runtime stage sets USER');
    assert.ok(!['root', '0'].includes(user.args.split(':')[0] ?? ''), `runtime user is ${user.args}`);
  });

  test('checks health against a route the server registers', () => {
    const check = runtime.find((line) => line.word === 'HEALTHCHECK');
    assert.ok(check, 'the runtime stage has a HEALTHCHECK');
    const path = check.args.match(/\/[a-z]+(?=['"])/)?.[0];
    assert.ok(path && routes.has(path), `health check path ${path} is not a GET route in src/`);
  });
});

describe('compose.yaml', () => {
  test('runs the gateway image only with subcommands the command line has', () => {
    assert.ok(ownServices.length >= 3, 'two gateways and the sandbox run the tollroute image');
    for (const [, service] of ownServices) assertGatewayCommand(service.command ?? []);
  });

  test('runs two gateways', () => {
    const gateways = ownServices.filter(([, service]) => service.command?.at(-1) === 'serve');
    assert.equal(gateways.length, 2);
  });

  test('gives the tollroute services only environment variables that the source reads', () => {
    for (const [, service] of ownServices) for (const name of Object.keys(service.environment ?? {})) assertEnvironmentVariableRead(name);
  });

  test('publishes only the port the gateway listens on inside its container', () => {
    for (const [, service] of ownServices) {
      for (const mapping of service.ports ?? []) assert.ok(listenPorts.has(Number(mapping.split(':').at(-1))), `${mapping} maps no listening port`);
      for (const port of service.expose ?? []) assert.ok(listenPorts.has(Number(port)), `exposed ${port} is not a listening port`);
    }
  });

  test('mounts a gateway configuration that the schema accepts', () => {
    const text = read('deploy/gateway.yaml').replace(/\$\{TOLLROUTE_ADMIN_TOKEN\}/g, 'a-token-of-sixteen-chars');
    const result = ConfigSchema.safeParse(parse(text));
    assert.ok(result.success, result.success ? '' : result.error.message);
  });
});
