// The account console's pages under /dashboard: the files `npm run build` made with Vite in
// dist/dashboard. Hashed assets are cached for a year (a new build has new names); index.html is
// revalidated on every load so a new build is picked up at once. Every other /dashboard path is
// the same page, whose own router shows the view the address names (a reload keeps the page).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

/** Where the build writes the console: three levels up from src/http/routes and dist/http/routes alike. */
export const BUILT_CONSOLE_DIR = fileURLToPath(new URL('../../../dist/dashboard', import.meta.url));

// The page runs only its own scripts and talks only to this gateway; no other site may frame it.
// Images and videos may come from anywhere: the gallery shows generated media where the upstream
// keeps it (its own storage, another origin, http on a local sandbox). Media run no code.
const PAGE_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'self'; img-src 'self' data: https: http:; media-src 'self' https: http:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

// The console's pages and files are HTML for a browser, not API: left out of /openapi.json.
const NOT_API = { schema: { hide: true } };

export const consoleRoutes: FastifyPluginAsync<{ dir?: string }> = async (app, { dir = BUILT_CONSOLE_DIR }) => {
  const pages = ['/dashboard', '/dashboard/*'];
  if (!existsSync(path.join(dir, 'index.html'))) {
    // Checked once at start: a gateway running from a checkout that was never built says what to do.
    const notBuilt = async (_request: unknown, reply: FastifyReply) =>
      reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(`The account console is not built (no ${path.join(dir, 'index.html')}). Run \`npm run build\`, then restart the gateway.\n`);
    for (const url of pages) app.get(url, NOT_API, notBuilt);
    return;
  }
  await app.register(fastifyStatic, {
    root: path.join(dir, 'assets'),
    prefix: '/dashboard/assets/',
    // The only files Vite writes here have a content hash in their names.
    maxAge: '365d',
    immutable: true,
    index: false,
    dotfiles: 'deny',
    schemaHide: true,
  });
  for (const url of pages) {
    app.get(url, NOT_API, async (_request, reply) => reply.headers(PAGE_HEADERS).sendFile('index.html', dir, { cacheControl: false }));
  }
};
