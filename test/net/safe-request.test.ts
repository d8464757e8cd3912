import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { RefusedUrlError, RequestTimeoutError, safeRequest } from '../../src/net/safe-request.js';

interface Seen {
  method: string;
  path: string;
  host: string | undefined;
  body: string;
}

describe('safeRequest', () => {
  const seen: Seen[] = [];
  let server: Server;
  let port: number;
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/ok': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('fine'),
    '/redirect': (_req, res) => res.writeHead(302, { location: '/ok' }).end('moved'),
    '/never': () => {}, // no answer at all
    '/slow-body': (_req, res) => {
      res.writeHead(200);
      res.write('a');
    }, // headers, then nothing
    '/big': (_req, res) => res.writeHead(200).end(Buffer.alloc(1_000_000, 'x')),
  };

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', path: req.url ?? '', host: req.headers.host, body: Buffer.concat(chunks).toString() });
        (routes[req.url ?? ''] ?? ((_q, r) => r.writeHead(404).end()))(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const local = (path: string) => `http://127.0.0.1:${port}${path}`;
  const pathsSeen = () => seen.map((s) => s.path);

  test('a loopback address is refused without allowPrivate, and nothing is sent', async () => {
    seen.length = 0;
    await assert.rejects(
      safeRequest(local('/ok'), { timeoutMs: 1000, field: 'callback_url' }),
      new RefusedUrlError('callback_url: refused address 127.0.0.1 (loopback)'),
    );
    assert.deepEqual(pathsSeen(), []);
  });

  test('with allowPrivate the same address answers, method, body and Host as given', async () => {
    seen.length = 0;
    const response = await safeRequest(local('/ok'), {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
      timeoutMs: 2000,
      allowPrivate: true,
    });
    assert.deepEqual(
      { status: response.status, body: response.body.toString(), truncated: response.truncated },
      { status: 200, body: 'fine', truncated: false },
    );
    assert.deepEqual(seen, [{ method: 'POST', path: '/ok', host: `127.0.0.1:${port}`, body: '{"a":1}' }]);
  });

  test('a redirect is an answer, not followed', async () => {
    seen.length = 0;
    const response = await safeRequest(local('/redirect'), { timeoutMs: 2000, allowPrivate: true });
    assert.equal(response.status, 302);
    assert.equal(response.headers.location, '/ok');
    assert.deepEqual(pathsSeen(), ['/redirect']);
  });

  test('a server that never answers times out after timeoutMs', async () => {
    const started = Date.now();
    await assert.rejects(safeRequest(local('/never'), { timeoutMs: 200, allowPrivate: true }), new RequestTimeoutError(200));
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 190 && elapsed < 2000, `took ${elapsed} ms`);
  });

  test('the timeout covers the body too: headers in time, the rest never', async () => {
    await assert.rejects(safeRequest(local('/slow-body'), { timeoutMs: 200, allowPrivate: true }), RequestTimeoutError);
  });

  test('a resolution that never ends is inside the timeout as well', async () => {
    await assert.rejects(safeRequest('http://hangs.example/', { timeoutMs: 100, lookup: () => new Promise(() => {}) }), RequestTimeoutError);
  });

  test('at most maxResponseBytes of the body are read', async () => {
    const response = await safeRequest(local('/big'), { timeoutMs: 2000, allowPrivate: true, maxResponseBytes: 1000 });
    assert.deepEqual({ length: response.body.length, truncated: response.truncated }, { length: 1000, truncated: true });
  });

  test('localhost is refused without allowPrivate', async () => {
    await assert.rejects(safeRequest(`http://localhost:${port}/ok`, { timeoutMs: 1000 }), new RefusedUrlError('url: refused address localhost (loopback)'));
  });

  test('localhost is reached with allowPrivate, whichever of ::1 and 127.0.0.1 it resolves to first', async () => {
    const response = await safeRequest(`http://localhost:${port}/ok`, { timeoutMs: 2000, allowPrivate: true });
    assert.equal(response.status, 200);
  });

  test('a name that resolves to a loopback address is refused after resolution', async () => {
    seen.length = 0;
    await assert.rejects(
      safeRequest(`http://hooks.example:${port}/ok`, {
        timeoutMs: 1000,
        lookup: async () => [{ address: '127.0.0.1', family: 4 }],
      }),
      new RefusedUrlError('url: hooks.example resolves to refused address 127.0.0.1 (loopback)'),
    );
    assert.deepEqual(pathsSeen(), []);
  });

  test('one refused address among several refuses the whole name', async () => {
    await assert.rejects(
      safeRequest('http://hooks.example/ok', {
        timeoutMs: 1000,
        lookup: async () => [
          { address: '93.184.216.34', family: 4 },
          { address: '::ffff:169.254.169.254', family: 6 },
        ],
      }),
      new RefusedUrlError('url: hooks.example resolves to refused address ::ffff:169.254.169.254 (metadata (IPv4-mapped 169.254.169.254))'),
    );
  });

  test('the connection goes to the resolved address while Host keeps the name', async () => {
    seen.length = 0;
    let lookups = 0;
    const response = await safeRequest(`http://hooks.example:${port}/ok`, {
      timeoutMs: 2000,
      allowPrivate: true,
      lookup: async () => {
        lookups++;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    assert.equal(response.status, 200);
    assert.deepEqual({ lookups, seen }, { lookups: 1, seen: [{ method: 'GET', path: '/ok', host: `hooks.example:${port}`, body: '' }] });
  });

  test('a failed resolution is an error, not a refusal', async () => {
    const error = await safeRequest('http://nowhere.invalid/', {
      timeoutMs: 1000,
      lookup: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' });
      },
    }).catch((e: unknown) => e);
    assert.ok(error instanceof Error && !(error instanceof RefusedUrlError));
    assert.match(error.message, /ENOTFOUND/);
  });

  test('an abort signal ends the exchange with its reason', async () => {
    const controller = new AbortController();
    const pending = safeRequest(local('/never'), { timeoutMs: 5000, allowPrivate: true, signal: controller.signal });
    const reason = new Error('shutting down');
    setImmediate(() => controller.abort(reason));
    await assert.rejects(pending, reason);
  });

  test('scheme and credentials are checked before anything is resolved', async () => {
    const lookup = async () => {
      throw new Error('must not resolve');
    };
    await assert.rejects(safeRequest('ftp://x.example/', { timeoutMs: 100, lookup }), new RefusedUrlError('url: must be an http(s) URL'));
    await assert.rejects(
      safeRequest('http://a:b@x.example/', { timeoutMs: 100, lookup, allowPrivate: true }),
      new RefusedUrlError('url: must not contain credentials'),
    );
  });
});
