// The sandbox's control API (faults, request log) is this machine's alone, whatever address the
// sandbox listens on, and is off, with nothing logged, beside real channels.
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { request } from 'undici';
import { buildConfig } from '../../src/config/load.js';
import { realChannels } from '../../src/config/real-channels.js';
import { sandboxCatalogue } from '../../src/config/sandbox-catalogue.js';
import { controlRefusal, isLoopbackAddress } from '../../src/sandbox/control-access.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { AUTH } from './sandbox-client.js';

/** An address of this machine that is not loopback, if it has one. */
const outside = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

const call = async (url: string, method: string, body?: unknown) => {
  const res = await request(url, {
    method: method as 'GET',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as any };
};
const HELLO = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }] };

test('loopback addresses are told from others, IPv4-mapped ones included', () => {
  const seen = ['127.0.0.1', '127.3.2.1', '::1', '::ffff:127.0.0.1', '192.0.2.2', '::ffff:192.0.2.2', 'fd00::2', '0.0.0.0', undefined].map(isLoopbackAddress);
  assert.deepEqual(seen, [true, true, true, true, false, false, false, false, false]);
  assert.deepEqual(controlRefusal('loopback', '10.0.0.1')?.status, 403);
  assert.deepEqual(controlRefusal('off', '127.0.0.1')?.status, 404);
});

test('a sandbox on every address serves calls from anywhere but control requests from loopback only', {
  skip: outside === undefined && 'no address besides loopback',
}, async () => {
  const sandbox = await startSandbox({ host: '0.0.0.0', port: 0 });
  try {
    const remote = `http://${outside}:${sandbox.port}`;
    const local = `http://127.0.0.1:${sandbox.port}`;
    assert.equal((await call(`${remote}/v1/chat/completions`, 'POST', HELLO)).status, 200);
    const refused = {
      status: 403,
      body: { error: { message: 'the sandbox control API answers on loopback only', type: 'invalid_request_error', param: null, code: null } },
    };
    assert.deepEqual(await call(`${remote}/__sandbox/requests`, 'GET'), refused);
    assert.deepEqual(await call(`${remote}/__sandbox/faults`, 'POST', { kind: 'chat', status: 500 }), refused);
    const logged = await call(`${local}/__sandbox/requests`, 'GET');
    assert.deepEqual(
      logged.body.data.map((r: { path: string }) => r.path),
      ['/v1/chat/completions'],
    );
    assert.deepEqual((await call(`${local}/__sandbox/faults`, 'GET')).body.data, []);
  } finally {
    await sandbox.close();
  }
});

test('with its control API off, the sandbox answers 404 to control requests: no fault is added, no request read', async () => {
  const sandbox = await startSandbox({ port: 0, control: 'off' });
  try {
    assert.equal((await call(`${sandbox.url}/v1/chat/completions`, 'POST', HELLO)).status, 200);
    for (const [method, path] of [
      ['GET', '/__sandbox/requests'],
      ['POST', '/__sandbox/faults'],
    ] as const) {
      const res = await call(`${sandbox.url}${path}`, method, method === 'POST' ? { status: 500 } : undefined);
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    assert.equal((await call(`${sandbox.url}/v1/chat/completions`, 'POST', HELLO)).status, 200, 'no fault was added');
  } finally {
    await sandbox.close();
  }
});

test('the built-in catalogue has no real channels; a channel elsewhere is one', () => {
  const builtIn = buildConfig({ ...sandboxCatalogue('http://127.0.0.1:8081'), sandbox: { enabled: true, port: 8081 } }).config;
  assert.deepEqual(realChannels(builtIn), []);
  const mixed = buildConfig({
    ...sandboxCatalogue('http://localhost:8081'),
    sandbox: { enabled: true, port: 8081 },
    channels: { ...sandboxCatalogue('http://localhost:8081').channels, openai: { kind: 'openai', base_url: 'https://api.openai.com/v1', api_key: 'sk-real' } },
  }).config;
  assert.deepEqual(realChannels(mixed), ['openai']);
  const otherPort = buildConfig({ ...sandboxCatalogue('http://127.0.0.1:9999'), sandbox: { enabled: true, port: 8081 } }).config;
  assert.equal(realChannels(otherPort).length, Object.keys(otherPort.channels).length);
});
