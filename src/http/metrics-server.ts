// /metrics on its own port (config `metrics.port`), so scrapers reach it on an internal address
// while the gateway's own port faces callers. A bare node:http server: one route, no framework.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { METRICS_REFUSED } from './metrics.js';

export async function startMetricsServer({
  host,
  port,
  allowed,
  registry,
}: {
  host: string;
  port: number;
  /** Whether a request's Authorization may read the metrics (metrics.ts, metricsAccess). */
  allowed: (authorization: string | undefined) => boolean;
  registry: Registry;
}): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `no route for ${req.method} ${path}`, type: 'not_found_error' }));
      return;
    }
    if (!allowed(req.headers.authorization)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: METRICS_REFUSED, type: 'auth_error' }));
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as { port: number };
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
