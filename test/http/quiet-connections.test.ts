// A closing gateway ends at once the connections that carry no request, including one that has sent
// nothing yet, and leaves a response under way to finish.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { quietConnectionCloser } from '../../src/http/quiet-connections.js';
import { startTestGateway } from '../helpers/gateway.js';

/** A server whose `/slow` answers after `slowMs`, and everything else at once. */
async function serverWithCloser(slowMs = 300) {
  const server: Server = createServer((req, res) => {
    if (req.url === '/slow') setTimeout(() => res.end('slow'), slowMs);
    else res.end('ok');
  });
  const closeQuiet = quietConnectionCloser(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { server, port, closeQuiet };
}

async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

/** Resolves true when `socket` closes within `ms`, false otherwise. */
const closesWithin = (socket: Socket, ms: number) =>
  new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

describe('the quiet-connection closer', () => {
  const servers: Server[] = [];
  // (closeAllConnections: a socket a failed test left open would hold server.close forever)
  after(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve).closeAllConnections()))));

  test('a connection that has sent nothing yet is closed', async () => {
    const { server, port, closeQuiet } = await serverWithCloser();
    servers.push(server);
    const socket = await openSocket(port);
    await sleep(20); // the server has accepted it
    const closing = closesWithin(socket, 1_000);
    closeQuiet();
    assert.equal(await closing, true);
  });

  test('a kept-alive connection between two requests is closed', async () => {
    const { server, port, closeQuiet } = await serverWithCloser();
    servers.push(server);
    const socket = await openSocket(port);
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    const [answer] = (await once(socket, 'data')) as [Buffer];
    assert.match(answer.toString(), /^HTTP\/1\.1 200/);
    const closing = closesWithin(socket, 1_000);
    closeQuiet();
    assert.equal(await closing, true);
  });

  test('a connection whose response is under way is left to finish it', async () => {
    const { server, port, closeQuiet } = await serverWithCloser(300);
    servers.push(server);
    const answer = request(`http://127.0.0.1:${port}/slow`).then((res) => res.body.text());
    await sleep(100); // the request is in, its answer not yet
    closeQuiet();
    assert.equal(await answer, 'slow');
  });
});

test('a closing gateway does not wait out its shutdown grace for a connection that has sent nothing', async () => {
  const gw = await startTestGateway({ limits: { shutdown_grace_ms: 20_000 } });
  const { port } = new URL(gw.url);
  const socket = await openSocket(Number(port));
  const startedAt = performance.now();
  await gw.close();
  const tookMs = performance.now() - startedAt;
  assert.ok(tookMs < 5_000, `the close took ${Math.round(tookMs)} ms, against a grace of 20 s`);
  assert.equal(socket.destroyed || (await closesWithin(socket, 1_000)), true, 'the idle connection was closed');
});
