// Assembles the HTTP server: one plugin per job, the /v1 scope behind API-key authentication, and
// the account API beside it, which takes the console's session cookie as well.

import { AjvCompiler } from '@fastify/ajv-compiler';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { ChannelsAdmin } from '../admin/channels.js';
import type { Reload } from '../admin/reload.js';
import type { BatchRunner } from '../batches/runner.js';
import type { Config } from '../config/schema.js';
import { unavailable } from '../errors.js';
import type { Pipeline } from '../pipeline/metered-call.js';
import type { StoreHealth } from '../store/health.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/open.js';
import type { SubmitDeps } from '../tasks/submit.js';
import { cardPaymentsOf } from '../topups/stripe-client.js';
import { apiKeyHook } from './auth.js';
import { registerBodyTimeout } from './body-timeout.js';
import { registerCors } from './cors.js';
import { answerClientError, describeSchemaError, registerErrorHandlers } from './errors.js';
import { registerJsonBodies, requireMultipartBoundary } from './json-body.js';
import type { KeyResolver } from './key-resolver.js';
import { type GatewayMetrics, registerRequestMetrics } from './metrics.js';
import { nulInUrl } from './nul-guard.js';
import { registerOpenApi, serveOpenApi } from './openapi.js';
import { lazyRequestLoggers } from './request-logger.js';
import { accountRoutes } from './routes/account.js';
import { adminRoutes } from './routes/admin.js';
import { assetRoutes } from './routes/assets.js';
import { batchRoutes } from './routes/batches.js';
import { chatRoutes } from './routes/chat.js';
import { completionsRoutes } from './routes/completions.js';
import { consoleRoutes } from './routes/console.js';
import { embeddingsRoutes } from './routes/embeddings.js';
import { eraseRoutes } from './routes/erase.js';
import { fileServeRoutes, fileUploadRoutes } from './routes/files.js';
import { geminiRoutes } from './routes/gemini.js';
import { healthRoutes } from './routes/health.js';
import { imageRoutes } from './routes/images.js';
import { imagesSyncRoutes } from './routes/images-sync.js';
import { messagesRoutes } from './routes/messages.js';
import { messagesCountTokensRoutes } from './routes/messages-count-tokens.js';
import { minutesRoutes } from './routes/minutes.js';
import { modelRoutes } from './routes/models.js';
import { moderationsRoutes } from './routes/moderations.js';
import { rerankRoutes } from './routes/rerank.js';
import { responsesRoutes } from './routes/responses.js';
import { searchRoutes } from './routes/search.js';
import { signInRoutes, signOutRoutes } from './routes/session.js';
import { speechRoutes } from './routes/speech.js';
import { stripeWebhookRoutes } from './routes/stripe-webhook.js';
import { transcriptionRoutes } from './routes/transcriptions.js';
import { translationRoutes } from './routes/translations.js';
import { videoRoutes } from './routes/videos.js';
import { registerServerTiming } from './server-timing.js';
import { accountAuthHook, type ConsoleSettings } from './session-auth.js';
import type { TaskRouteDeps } from './task-handler.js';

export interface ServerDeps {
  config: Config;
  store: Store;
  pipeline: Pipeline;
  tasks: SubmitDeps;
  keys: KeyResolver;
  metrics: GatewayMetrics;
  logger: FastifyBaseLogger;
  health: StoreHealth;
  /** The channels and their live state, for the operator (GET /admin/channels). */
  channels: ChannelsAdmin;
  /** POST /admin/reload: the configuration file read again (admin/reload.ts). */
  reload: Reload;
  /** The batch runner, woken by a new or cancelled batch (batches/runner.ts). */
  batches?: Pick<BatchRunner, 'wake'>;
}

// One pool of validators for every server the process builds (each gateway a test starts): Ajv keeps
// each compiled schema by the schema object, and the route schemas are module constants. (With a
// compiler of its own, Fastify compiles header schemas as written: the gateway validates none.)
const sharedValidators = AjvCompiler();

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  const { config, store, pipeline, keys, metrics } = deps;
  const taskDeps: TaskRouteDeps = { store, pipeline, submit: deps.tasks, allowPrivateUrls: config.network.allow_private_urls, publicUrl: config.public_url };
  const fileDeps = {
    store,
    pipeline,
    dataDir: config.data_dir,
    publicUrl: config.public_url,
    files: config.files,
    uploadLimitBytes: config.limits.upload_limit_bytes,
  };
  const app = Fastify({
    loggerInstance: deps.logger,
    childLoggerFactory: lazyRequestLoggers,
    bodyLimit: config.limits.body_limit_bytes,
    // Always the gateway's own id: a caller's x-request-id is kept beside it, never trusted as it.
    genReqId: () => newId('req'),
    requestIdHeader: false,
    // One line per request, written when the answer ends (metrics.ts), streams included.
    logController: new LogController({ disableRequestLogging: true }),
    // A client that trickles its request (slowloris) is cut off: headers within headers_timeout_ms,
    // the whole request within receive_timeout_ms, checked every second rather than Node's 30 s.
    requestTimeout: config.limits.receive_timeout_ms,
    // Never above the receive timeout: Node cuts a request no sooner than its headers timeout, so a
    // longer one would let a stalled body outlive receive_timeout_ms.
    http: { headersTimeout: Math.min(config.limits.headers_timeout_ms, config.limits.receive_timeout_ms), connectionsCheckingInterval: 1_000 },
    clientErrorHandler: answerClientError,
    forceCloseConnections: 'idle',
    // Our own 503 below answers in the spec's error shape.
    return503OnClosing: false,
    // Wrong types are refused, never silently coerced; unknown fields pass through to upstreams.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    schemaErrorFormatter: describeSchemaError,
    schemaController: { compilersFactory: { buildValidator: sharedValidators } },
  });
  app.decorateRequest('caller', null);
  app.decorateRequest('clientRequestId', null);
  app.decorateRequest('batchLine', false);
  app.decorateRequest('consoleSession', null);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Registered before the hook that calls it: its preValidation hook and interval.
  const noteBodyArrival = registerBodyTimeout(app, { timeoutMs: config.limits.body_timeout_ms });
  // One hook for what every request needs first (each hook is a step of every call).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // The caller's own id, when it looks like one: in every log line of the request and on its usage.
    const given = request.headers['x-request-id'];
    if (typeof given === 'string' && REQUEST_ID.test(given)) {
      request.clientRequestId = given;
      request.log = request.log.child({ clientRequestId: given });
      reply.header('x-client-request-id', given);
    }
    if (closing) {
      reply.header('connection', 'close');
      return done(unavailable());
    }
    const nul = nulInUrl(request);
    if (nul) return done(nul);
    noteBodyArrival(request, reply);
    done();
  });

  registerCors(app, config.cors);
  registerErrorHandlers(app, deps.health);
  registerJsonBodies(app);
  registerServerTiming(app, metrics);
  await registerOpenApi(app, { publicUrl: config.public_url });
  registerRequestMetrics(app, { metrics, logger: deps.logger, exposure: config.metrics, adminToken: config.admin_token });
  await app.register(healthRoutes, { store, health: deps.health, isClosing: () => closing });
  const consoleSettings: ConsoleSettings = { publicUrl: config.public_url, sessionTtlMs: config.console.session_ttl_ms };
  await app.register(adminRoutes, {
    store,
    keys,
    adminToken: config.admin_token,
    loginLinks: { publicUrl: config.public_url, ttlMs: config.console.login_link_ttl_ms },
    channels: deps.channels,
    reload: deps.reload,
    pipeline,
  });
  await app.register(fileServeRoutes, fileDeps);
  // Card top-ups: Stripe's webhook is public (its signature is the credential), outside /v1.
  const cards = await cardPaymentsOf(config.stripe);
  await app.register(stripeWebhookRoutes, { store, cards });
  // The console's pages are public files; what they show comes from the account API below.
  await app.register(consoleRoutes);
  await app.register(async (v1) => {
    v1.addHook('onRequest', apiKeyHook(keys));
    v1.addHook('onRequest', requireMultipartBoundary);
    await v1.register(modelRoutes, { pipeline });
    await v1.register(chatRoutes, { pipeline, store });
    await v1.register(completionsRoutes, { pipeline, store });
    await v1.register(moderationsRoutes, { pipeline, store });
    await v1.register(rerankRoutes, { pipeline, store });
    await v1.register(embeddingsRoutes, { pipeline, store });
    await v1.register(messagesRoutes, { pipeline, store });
    await v1.register(messagesCountTokensRoutes, { pipeline });
    await v1.register(responsesRoutes, { pipeline, store });
    await v1.register(geminiRoutes, { pipeline, store });
    await v1.register(speechRoutes, { pipeline, store });
    await v1.register(searchRoutes, { pipeline, store });
    // Multipart only where a file is uploaded: on any other route it is the wrong content type (400 naming it).
    await v1.register(async (uploads) => {
      await uploads.register(multipart, { limits: { fileSize: config.limits.upload_limit_bytes, files: 1, fields: 20, parts: 21 }, throwFileSizeLimit: true });
      await uploads.register(translationRoutes, { pipeline, store, dataDir: config.data_dir, uploadLimitBytes: config.limits.upload_limit_bytes });
      await uploads.register(transcriptionRoutes, { pipeline, store, dataDir: config.data_dir, uploadLimitBytes: config.limits.upload_limit_bytes });
      await uploads.register(fileUploadRoutes, fileDeps);
    });
    await v1.register(imageRoutes, taskDeps);
    await v1.register(imagesSyncRoutes, { ...fileDeps, allowPrivateUrls: config.network.allow_private_urls });
    await v1.register(videoRoutes, taskDeps);
    await v1.register(eraseRoutes, taskDeps);
    await v1.register(minutesRoutes, taskDeps);
    await v1.register(assetRoutes, { store, pipeline });
    await v1.register(batchRoutes, { store, pipeline, runner: deps.batches });
  });
  // The account API: a key as above, or the console's session cookie. Its own scope, so cookies are
  // parsed here alone and the metered calls above authenticate exactly as before, by key only.
  await app.register(async (account) => {
    await account.register(cookie);
    account.addHook('onRequest', requireMultipartBoundary);
    const sessionDeps = { store, keys, settings: consoleSettings };
    await account.register(signInRoutes, sessionDeps);
    await account.register(async (signedIn) => {
      signedIn.addHook('onRequest', accountAuthHook(sessionDeps));
      await signedIn.register(signOutRoutes, sessionDeps);
      await signedIn.register(accountRoutes, {
        store,
        pipeline,
        keys,
        webhooks: { timeoutMs: config.webhooks.timeout_ms, allowPrivate: config.network.allow_private_urls },
        redemption: config.redemption,
        cards: { cards, publicUrl: config.public_url },
      });
    });
  });
  await serveOpenApi(app, { publicUrl: config.public_url });
  return app;
}
