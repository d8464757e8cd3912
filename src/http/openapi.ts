// The OpenAPI 3.1 document of every public endpoint, generated from the routes' own schemas
// (@fastify/swagger), served at /openapi.json, and the reference page at /docs (@fastify/swagger-ui,
// whose scripts and styles are files of the package, served from here: nothing comes from a CDN).
// What the routes cannot say about themselves is said once here: which credential each area of
// the API takes, and the parts of a request that are documented but not validated by Fastify; the
// operationIds, body examples and response headers of schemas/finish-document.ts, and the callbacks
// the gateway sends (schemas/webhooks.ts).
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { PACKAGE_VERSION } from '../package-version.js';
import { finishDocument } from './schemas/finish-document.js';
import { MessagesBody } from './schemas/messages.js';
import { WEBHOOKS } from './schemas/webhooks.js';
import { serializedAsBuilt } from './serialized-as-built.js';
import { SESSION_COOKIE } from './session-auth.js';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * Documented, never validated: a body the handler reads itself (multipart, or JSON checked by
     * a normaliser with its own messages), and headers the handler reads. Fastify ignores this key;
     * the document shows it as the operation's body and header parameters.
     */
    docsOnly?: { body?: unknown; headers?: unknown };
  }
}

type Security = NonNullable<FastifySchema['security']>;

// Alternatives: any one of a list's entries admits the request.
const KEY: Security = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
const KEY_OR_SESSION: Security = [...KEY, { cookieAuth: [] }];
const ADMIN: Security = [{ adminToken: [] }];
const NONE: Security = [];

/** The ARK-compatible video paths outside /v1 take keys like every /v1 call. */
const KEYED_PREFIXES = ['/v1/', '/api/v3/', '/v3/', '/api/v1/'];

/** The credential of each area of the API; a route's own `security` (sign-in, sign-out, /metrics) wins. */
function securityOf(url: string): Security {
  if (url.startsWith('/admin/')) return ADMIN;
  if (url === '/v1/account' || url.startsWith('/v1/account/')) return KEY_OR_SESSION;
  if (KEYED_PREFIXES.some((prefix) => url.startsWith(prefix))) return KEY;
  // /healthz, /openapi.json, and /files/{id}/{name}, whose unguessable URL is its own credential.
  return NONE;
}

const TAGS = [
  { name: 'chat', description: 'Chat completions, messages and responses: billed on the upstream’s token usage, streamed as it arrives.' },
  { name: 'embeddings', description: 'Embedding vectors on OpenAI, Azure and Gemini upstreams, billed on the input tokens.' },
  { name: 'moderations', description: 'Content moderation, billed per call.' },
  { name: 'rerank', description: 'Documents ranked by relevance to a query (the Cohere and Jina shape), billed per call or per token.' },
  { name: 'images', description: 'Images generated or edited and answered at once, billed per image; they join the account’s gallery.' },
  { name: 'audio', description: 'Speech synthesis, speech translation and transcription.' },
  { name: 'search', description: 'Web and global search, billed per call.' },
  { name: 'tasks', description: 'Images, videos, subtitle erase and meeting minutes: created at once, finished in the background, polled or called back.' },
  {
    name: 'batches',
    description: 'Batches of calls from a JSONL file, run by the gateway on any upstream at the batch price, each line held and settled on its own.',
  },
  { name: 'files', description: 'Uploads served back at an unguessable URL, and the account’s generated images and videos.' },
  { name: 'models', description: 'The catalogue.' },
  { name: 'account', description: 'The key’s own account: balance, usage, spend, keys, tasks, webhooks; also with the console’s session cookie.' },
  { name: 'admin', description: 'The operator’s API: accounts, credits, keys, ledger, usage.' },
  { name: 'payments', description: 'Stripe’s signed webhook of card top-ups (no key: the signature is the credential).' },
  { name: 'operations', description: 'Health, metrics and this document.' },
];

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (tr-…) as `Authorization: Bearer tr-…`; also accepted as `x-api-key` (apiKeyHeader).',
  },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same API key (tr-…) in the `x-api-key` header.' },
  cookieAuth: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'The account console’s session cookie, set by POST /v1/account/session; accepted by the /v1/account routes only.',
  },
  adminToken: { type: 'http', scheme: 'bearer', description: 'The operator’s admin token (TOLLROUTE_ADMIN_TOKEN) as `Authorization: Bearer …`.' },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'The metrics token (`metrics.token`), when the operator set one.' },
} as const;

/**
 * A route schema's own definitions are not carried into the document, only its references to them
 * (rewritten to #/components/schemas/…): the messages body's recursive content block is listed here.
 */
const COMPONENTS = { securitySchemes: SECURITY_SCHEMES, schemas: { ...MessagesBody.definitions } };

/** The reference page's mark: the name on a toll-gate bar, drawn here so the page needs no file of its own. */
const LOGO_SVG = [
  '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" viewBox="0 0 200 40">',
  '<rect x="2" y="8" width="8" height="28" rx="2" fill="#1f6feb"/><rect x="10" y="12" width="30" height="6" rx="3" fill="#f2cc60"/>',
  '<text x="48" y="28" font-family="system-ui, sans-serif" font-size="22" font-weight="600" fill="#ffffff">tollroute</text>',
  '</svg>',
].join('');

/** Before any route: the document is made of the routes registered after this. */
export async function registerOpenApi(app: FastifyInstance, { publicUrl }: { publicUrl: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'tollroute',
        version: PACKAGE_VERSION,
        description: 'An AI API gateway: prepaid API keys, funds held per call and settled on real usage. Errors are `{"error", "type"}`.',
      },
      servers: [{ url: publicUrl }],
      tags: TAGS,
      components: COMPONENTS,
      webhooks: WEBHOOKS,
      // Cast: openapi-types wants mutable objects, and the schemas are read-only JSON Schema literals.
    } as unknown as FastifyDynamicSwaggerOptions['openapi'],
    // Cast: the document is built as OpenAPI (never Swagger 2), and is finished in place.
    transformObject: (documentObject) => finishDocument((documentObject as { openapiObject: object }).openapiObject),
    // Paths stay whole: a public_url's own path (where a proxy mounts the gateway) is not cut from them.
    stripBasePath: false,
    transform: ({ schema, url }) => {
      const { docsOnly, ...validated } = schema ?? {};
      return {
        url,
        schema: {
          ...validated,
          ...(docsOnly?.body !== undefined && { body: docsOnly.body }),
          ...(docsOnly?.headers !== undefined && { headers: docsOnly.headers }),
          security: validated.security ?? securityOf(url),
        } as FastifySchema,
      };
    },
  });
}

/** After the server's own hooks, like any route: /openapi.json and the reference page at /docs. */
export async function serveOpenApi(app: FastifyInstance, { publicUrl }: { publicUrl: string }): Promise<void> {
  // Built once, at the first request for it (every route is registered by then), then served as
  // text: not at start-up, which every gateway and every test gateway would pay for.
  let document: string | undefined;
  app.get('/openapi.json', {
    schema: {
      tags: ['operations'],
      summary: 'This document: every public endpoint, as OpenAPI 3.1.',
      response: { 200: { description: 'The OpenAPI document.', type: 'object' } },
    },
    ...serializedAsBuilt,
    handler: async (_request, reply) => reply.type('application/json; charset=utf-8').send((document ??= JSON.stringify(app.swagger()))),
  });

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The page loads its own files and the document, and nothing else: no CDN (and the online
    // validator badge stays off, as it is unless validatorUrl is set). Its "try it out" calls go
    // to public_url, which may not be the address the page was loaded from.
    staticCSP: [
      "default-src 'self'",
      `connect-src 'self' ${new URL(publicUrl).origin}`,
      "img-src 'self' data:",
      "font-src 'self' data:",
      "style-src 'self' 'unsafe-inline'",
      "object-src 'none'",
      "frame-ancestors 'none'",
      "base-uri 'self'",
    ].join('; '),
    // The project's name and mark, not the framework's, in the tab and the top bar.
    theme: {
      title: 'tollroute API reference',
      favicon: [{ filename: 'tollroute.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: LOGO_SVG }],
    },
    logo: { type: 'image/svg+xml', content: LOGO_SVG },
  });
}
