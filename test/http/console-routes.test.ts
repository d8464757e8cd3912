// The console's files under /dashboard: the page on every console path with no-cache, hashed assets
// cached for a year, a missing asset a 404 (never the page), and a clear 503 when nothing was built.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import Fastify from 'fastify';
import { consoleRoutes } from '../../src/http/routes/console.js';

const PAGE = '<!doctype html><title>console</title>';

async function serve(dir: string) {
  const app = Fastify();
  await app.register(consoleRoutes, { dir });
  return app;
}

describe('console routes', () => {
  const built = mkdtempSync(path.join(tmpdir(), 'tollroute-console-'));
  mkdirSync(path.join(built, 'assets'));
  writeFileSync(path.join(built, 'index.html'), PAGE);
  writeFileSync(path.join(built, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(built, 'secret.txt'), 'not for the web');
  after(() => rmSync(built, { recursive: true, force: true }));

  test('every console path is the page, revalidated on each load', async () => {
    const app = await serve(built);
    for (const url of ['/dashboard', '/dashboard/', '/dashboard/login', '/dashboard/keys', '/dashboard/usage?model=x']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, PAGE, url);
      assert.match(String(res.headers['content-type']), /^text\/html/, url);
      assert.equal(res.headers['cache-control'], 'no-cache', url);
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, url);
    }
  });

  test('hashed assets are cached as immutable; a missing one is a 404, not the page', async () => {
    const app = await serve(built);
    const asset = await app.inject({ url: '/dashboard/assets/index-abc123.js' });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.body, 'console.log(1)');
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal((await app.inject({ url: '/dashboard/assets/index-gone.js' })).statusCode, 404);
    // Nothing outside assets/ is read through it, however the path is spelt.
    for (const url of ['/dashboard/assets/..%2fsecret.txt', '/dashboard/assets/%2e%2e/secret.txt', '/dashboard/assets/%2e%2e%2fsecret.txt']) {
      const res = await app.inject({ url });
      assert.ok(!res.body.includes('not for the web'), `${url}: ${res.statusCode} ${res.body}`);
    }
  });

  test('a gateway whose console was never built answers 503 saying to run npm run build', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'tollroute-console-none-'));
    try {
      const app = await serve(empty);
      for (const url of ['/dashboard', '/dashboard/keys']) {
        const res = await app.inject({ url });
        assert.equal(res.statusCode, 503, url);
        assert.match(res.body, /not built.*Run `npm run build`/s, url);
        assert.match(String(res.headers['content-type']), /^text\/plain/, url);
      }
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
