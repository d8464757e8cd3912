// The OpenAPI document (/openapi.json) and the reference page (/docs) of a live gateway: a valid
// OpenAPI 3.1 document listing every route the server registered, with the credential of each
// area; a page whose every script and style is served by the gateway itself; response schemas
// that document upstream answers without stripping what they do not name; and every status a
// metered call can answer listed on its operation (403, 413, 502 with Retry-After among them).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Registered routes that the document leaves out on purpose, and why. */
const NOT_DOCUMENTED: { reason: string; matches: (route: { method: string; url: string }) => boolean }[] = [
  { reason: 'Fastify answers HEAD for every GET; the document lists the GET', matches: ({ method }) => method === 'HEAD' },
  {
    reason: 'the reference page and its own files (hidden by @fastify/swagger-ui): documentation, not API',
    matches: ({ url }) => url === '/docs' || url.startsWith('/docs/'),
  },
  {
    reason: 'the account console: pages and files for a browser (hidden in src/http/routes/console.ts), not API',
    matches: ({ url }) => url.startsWith('/dashboard'),
  },
];

/**
 * Every (method, url) of `printRoutes({ commonPrefix: false })`: a tree whose lines carry the part
 * of the path below their parent, four characters of indentation a level, and their methods.
 */
function registeredRoutes(tree: string): { method: string; url: string }[] {
  const routes: { method: string; url: string }[] = [];
  const pathAt: string[] = [];
  for (const line of tree.split('\n')) {
    const node = /^(.*?)[└├]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!node) continue;
    const depth = node[1]!.length / 4;
    const url = (pathAt[depth - 1] ?? '') + node[2];
    pathAt[depth] = url;
    for (const method of node[3]?.split(', ') ?? []) routes.push({ method, url });
  }
  return routes;
}

/** `/v1/models/:id` → `/v1/models/{id}` */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

describe('OpenAPI document and reference page', () => {
  let gw: TestGateway;
  let doc: any;
  const operations = () =>
    Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => HTTP_METHODS.includes(method))
        .map(([method, operation]) => ({ path, method, operation })),
    );

  before(async () => {
    // A small body limit, so a body past it is cheap to send.
    gw = await startTestGateway({ limits: { body_limit_bytes: 64 * 1024 } });
    const res = await request(`${gw.url}/openapi.json`); // no key: the document is public
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    doc = await res.body.json();
  });
  after(async () => {
    await gw.close();
  });

  test('is a valid OpenAPI 3.1 document of tollroute at the package’s version, served from public_url', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual({ title: doc.info.title, version: doc.info.version }, { title: 'tollroute', version });
    assert.deepEqual(doc.servers, [{ url: gw.url }]); // public_url: unset here, so the address it listens on
    assert.deepEqual(await new Validator().validate(doc), { valid: true });
    for (const { path, method, operation } of operations()) {
      const responses = Object.entries(operation.responses ?? {});
      assert.ok(responses.length > 0, `${method} ${path} has no responses`);
      for (const [status, response] of responses) assert.ok((response as any).description, `${method} ${path} ${status} has no description`);
      assert.ok(operation.summary, `${method} ${path} has no summary`);
      assert.equal(operation.tags?.length, 1, `${method} ${path} has no tag`);
    }
  });

  test('lists every route the server registered, and nothing else, with its method', () => {
    const registered = registeredRoutes(gw.gateway.app.printRoutes({ commonPrefix: false }))
      .filter((route) => !NOT_DOCUMENTED.some((exclusion) => exclusion.matches(route)))
      .map(({ method, url }) => `${method} ${openApiPath(url)}`)
      .sort();
    const documented = operations()
      .map(({ path, method }) => `${method.toUpperCase()} ${path}`)
      .sort();
    assert.ok(registered.length > 50, 'the route tree was read');
    assert.deepEqual(documented, registered);
    for (const route of ['POST /v1/chat/completions', 'POST /api/v3/contents/generations/tasks', 'GET /v1/account/usage', 'DELETE /admin/keys/{id}']) {
      assert.ok(documented.includes(route), route);
    }
  });

  test('says which credential each area takes: keys on /v1, the session cookie too on /v1/account, the admin token on /admin', () => {
    const KEY = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
    for (const { path, method, operation } of operations()) {
      const where = `${method} ${path}`;
      if (path === '/v1/account/session') continue;
      if (path.startsWith('/v1/account')) assert.deepEqual(operation.security, [...KEY, { cookieAuth: [] }], where);
      else if (path.startsWith('/admin/')) assert.deepEqual(operation.security, [{ adminToken: [] }], where);
      else if (/^\/(v1|v3|api\/v1|api\/v3)\//.test(path)) assert.deepEqual(operation.security, KEY, where);
    }
    const session = doc.paths['/v1/account/session'];
    assert.deepEqual([session.post.security, session.delete.security], [[], [{ cookieAuth: [] }]]);
    for (const open of ['/healthz', '/openapi.json', '/files/{id}/{name}']) assert.deepEqual(doc.paths[open].get.security, [], open);
    const schemes = doc.components.securitySchemes;
    assert.deepEqual(
      {
        bearer: [schemes.bearerAuth.type, schemes.bearerAuth.scheme],
        header: schemes.apiKeyHeader,
        cookie: schemes.cookieAuth,
        admin: schemes.adminToken.scheme,
      },
      {
        bearer: ['http', 'bearer'],
        header: { type: 'apiKey', in: 'header', name: 'x-api-key', description: schemes.apiKeyHeader.description },
        cookie: { type: 'apiKey', in: 'cookie', name: 'tollroute_session', description: schemes.cookieAuth.description },
        admin: 'bearer',
      },
    );
  });

  test('documents request bodies from the routes’ schemas: chat completions name model and messages', () => {
    const chat = doc.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(chat.required, ['model', 'messages']);
    assert.deepEqual([chat.properties.model.type, chat.properties.messages.type], ['string', 'array']);
    // Bodies read by the handlers themselves are documented too.
    const translation = doc.paths['/v1/audio/translations'].post.requestBody.content['multipart/form-data'].schema;
    assert.deepEqual(translation.required, ['model', 'file']);
    const video = doc.paths['/v1/videos/generations'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(video.required, ['model', 'content']);
  });

  /** The metered calls: every POST of the areas that call upstreams (counting tokens is free: never a 402). */
  const meteredPosts = () =>
    operations().filter(
      ({ method, path, operation }) =>
        method === 'post' &&
        ['chat', 'embeddings', 'moderations', 'rerank', 'images', 'audio', 'search', 'tasks'].includes(operation.tags[0]) &&
        path !== '/v1/messages/count_tokens',
    );
  const takesHeader = (operation: any, name: string) => (operation.parameters ?? []).some((p: any) => p.in === 'header' && p.name === name);

  test('every metered POST lists 400, 401, 402, 403, 408, 413, 429, 500, 502 and 503; 409 and 422 where it takes Idempotency-Key', () => {
    const metered = meteredPosts();
    for (const path of [
      '/v1/chat/completions',
      '/v1/messages',
      '/v1/responses',
      '/v1/audio/speech',
      '/v1/search',
      '/v1/audio/translations',
      '/v1/images/async',
      '/v1/audio/minutes',
    ]) {
      assert.ok(
        metered.some((op) => op.path === path),
        `${path} is a metered POST`,
      );
    }
    for (const { path, operation } of metered) {
      const listed = Object.keys(operation.responses);
      const expected = ['400', '401', '402', '403', '408', '413', '429', '500', '502', '503'];
      const idempotent = takesHeader(operation, 'idempotency-key');
      if (idempotent) expected.push('409', '422');
      for (const status of expected) assert.ok(listed.includes(status), `POST ${path} lists ${status}`);
      if (!idempotent) assert.ok(!listed.includes('409') && !listed.includes('422'), `POST ${path} takes no Idempotency-Key, so answers no 409 or 422`);
      const { 403: forbidden, 502: failed } = operation.responses;
      assert.match(forbidden.description, /may not use this model/, `POST ${path} 403`);
      assert.match(failed.description, /upstream provider failed/i, `POST ${path} 502`);
      assert.match(failed.description, /every channel of the model is out/, `POST ${path} 502`);
      assert.deepEqual(failed.headers['retry-after'].schema, { type: 'integer', minimum: 1 }, `POST ${path} 502 Retry-After`);
    }
  });

  test('a metered call’s real 403, 413 and 502 answers are statuses its operation lists, the 502 with Retry-After', async () => {
    const listed = Object.keys(doc.paths['/v1/chat/completions'].post.responses);
    const owner = await gw.account();
    const made = await gw.call(owner.key, 'POST', '/v1/account/keys', { name: 'chat only', allowed_models: ['sandbox-claude'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const chat = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }] };
    const refused = await gw.call(made.body.key, 'POST', '/v1/chat/completions', chat);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    const tooLarge = await gw.call(owner.key, 'POST', '/v1/chat/completions', { ...chat, messages: [{ role: 'user', content: 'x'.repeat(70 * 1024) }] });
    assert.equal(tooLarge.status, 413, JSON.stringify(tooLarge.body));
    assert.equal((await gw.admin('POST', '/admin/channels/sandbox-openai/disable')).status, 200);
    try {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(chat),
      });
      const body = await res.body.json();
      assert.equal(res.statusCode, 502, JSON.stringify(body));
      assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/);
    } finally {
      assert.equal((await gw.admin('POST', '/admin/channels/sandbox-openai/enable')).status, 200);
    }
    for (const status of [refused.status, tooLarge.status, 502]) assert.ok(listed.includes(String(status)), `${status} is listed`);
  });

  test('/docs is an HTML page whose scripts and styles all come from the gateway itself, and each answers 200', async () => {
    const page = await request(`${gw.url}/docs`);
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
    const html = await page.body.text();
    const assets = [...html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)].map((match) => new URL(match[1]!, `${gw.url}/docs`));
    assert.ok(assets.some((url) => url.pathname.endsWith('.js')) && assets.some((url) => url.pathname.endsWith('.css')), html);
    for (const url of assets) {
      assert.equal(url.origin, new URL(gw.url).origin, `${url} is not served by the gateway`);
      const res = await request(url);
      await res.body.dump();
      assert.equal(res.statusCode, 200, String(url));
    }
    // The page loads the same document as /openapi.json.
    const shown = await request(`${gw.url}/docs/json`);
    assert.deepEqual(await shown.body.json(), doc);
  });

  test('a field of the upstream’s answer that no schema names still reaches the caller of /v1/chat/completions', async () => {
    const { key } = await gw.account();
    const documented = doc.paths['/v1/chat/completions'].post.responses['200'].content['application/json'].schema;
    const upstreamAnswer = {
      id: 'chatcmpl-extra',
      object: 'chat.completion',
      created: 1,
      model: 'upstream-model',
      system_fingerprint: 'fp_sandbox',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 0 } },
    };
    // None of these is named by the documented schema, so a serializer built from it would drop them.
    assert.equal(documented.properties.system_fingerprint, undefined);
    assert.equal(documented.properties.choices.items.properties.logprobs, undefined);
    assert.equal(documented.properties.usage.properties.prompt_tokens_details, undefined);
    await gw.sandboxControl('POST', '/__sandbox/faults', { kind: 'chat', status: 200, body: upstreamAnswer, times: 1 });
    const answer = await gw.call(key, 'POST', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'a b' }] });
    assert.deepEqual(answer, { status: 200, body: { ...upstreamAnswer, model: 'sandbox-chat' } });
  });
});
