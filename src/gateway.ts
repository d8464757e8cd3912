// Builds a whole gateway from a validated config: store, limiter, upstream pools, pipeline,
// HTTP server and background sweeps. main.ts and the tests both start gateways through here.

import path from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { channelsAdmin } from './admin/channels.js';
import { createReloader, type Reload } from './admin/reload.js';
import { createBatchLineAuth } from './batches/line-auth.js';
import { createBatchRunner } from './batches/runner.js';
import { createInstance } from './billing/instance.js';
import { createLowBalanceSweeper } from './billing/low-balance.js';
import { createPriceBook } from './billing/price-book.js';
import { savePriceLists } from './billing/price-lists.js';
import { createProgressRecorder } from './billing/progress.js';
import { createSettlements } from './billing/settlements.js';
import { loadTokenizers } from './billing/tokens.js';
import type { Config } from './config/schema.js';
import { deleteExpiredSignIns } from './console/sweep.js';
import { removeUploadLeftovers, storedFilesDir } from './files/leftovers.js';
import { createFileSweeper } from './files/sweep.js';
import { createKeyResolver } from './http/key-resolver.js';
import { createKeyUseRecorder, type KeyUseRecorder } from './http/key-use.js';
import { createMetrics, metricsAccess } from './http/metrics.js';
import { startMetricsServer } from './http/metrics-server.js';
import { quietConnectionCloser } from './http/quiet-connections.js';
import { buildServer } from './http/server.js';
import { uploadSpoolDir } from './http/uploads.js';
import { createAuthFailureLimit, createRateLimiter } from './limits/index.js';
import { createPipeline } from './pipeline/metered-call.js';
import { createRouteHealth } from './routing/breaker.js';
import { breakerSettings, buildRoutes, createRoutingTable } from './routing/table.js';
import { StoreHealth } from './store/health.js';
import { openStore, type Store } from './store/open.js';
import { createTaskEngine } from './tasks/engine.js';
import { eraseHandler } from './tasks/kinds/erase.js';
import { imageHandler } from './tasks/kinds/image.js';
import { minutesHandler } from './tasks/kinds/minutes.js';
import { videoHandler } from './tasks/kinds/video.js';
import { createWebhookDeliverer } from './webhooks/deliverer.js';

/** How often a closing gateway closes the connections that carry no request (quiet-connections.ts). */
const QUIET_CLOSE_EVERY_MS = 50;

export interface Gateway {
  app: FastifyInstance;
  store: Store;
  /** When keys were last used, written every few seconds; `flush()` writes it now. */
  keyUse: KeyUseRecorder;
  /** Starts listening; resolves with the base URL. */
  listen(): Promise<string>;
  /** Stops taking requests, lets running ones finish within the grace period, then releases everything. */
  close(): Promise<void>;
  /** Reads the configuration file again and applies its channels, models and routing (admin/reload.ts). */
  reload: Reload;
}

export interface GatewayOptions {
  /** The file the configuration came from, read again on a reload; none for the built-in catalogue or a test's config. */
  configFile?: string;
  /** Whether the admin token was generated (the file sets none), so a reload does not take a new one for a change. */
  adminTokenGenerated?: boolean;
  /** The embedded sandbox's URL, when `serve` runs one: test keys are served there (docs/api.md "Test mode"). */
  sandboxUrl?: string;
  /** Told of each configuration a reload applies. */
  onReloaded?(config: Config): void;
}

export async function createGateway(config: Config, logger: FastifyBaseLogger, options: GatewayOptions = {}): Promise<Gateway> {
  // First of all: a disk that an earlier run's unfinished uploads filled must not stop the store opening.
  await removeUploadLeftovers({ filesDir: storedFilesDir(config.data_dir), spoolDir: uploadSpoolDir(config.data_dir), log: logger });
  // Settles answered before SQLite has them are journaled here (store/hot-ledger/answered-settles.ts).
  const store = await openStore(config.store, { log: logger, settleJournal: path.join(config.data_dir, 'answered-settles.jsonl') });
  const metrics = createMetrics();
  const limiter = await createRateLimiter({
    redisUrl: config.limits.redis,
    redisTimeoutMs: config.limits.redis_timeout_ms,
    redisProbeMs: config.limits.redis_probe_ms,
    log: logger,
  });
  metrics.watchLimiter(limiter);
  const keyUse = createKeyUseRecorder(store, { log: logger });
  const keys = createKeyResolver(store, {
    onUse: keyUse.used,
    invalidTtlMs: config.limits.invalid_key_cache_ms,
    failures: config.limits.auth_failures_per_minute > 0 ? createAuthFailureLimit({ perMinute: config.limits.auth_failures_per_minute }) : undefined,
    onLookup: (result) => metrics.countKeyLookup(result),
  });
  const routeHealth = createRouteHealth({
    ...breakerSettings(config),
    observer: {
      attempt: (channel, outcome) => metrics.countChannelAttempt(channel, outcome),
      transition: ({ channel, keyId }, { from, to, cooldownMs }) =>
        logger[to === 'closed' ? 'info' : 'warn'](
          { channel, channelKey: keyId ?? undefined, from, to, ...(to === 'open' && { cooldownMs }) },
          `${keyId === null ? 'channel' : 'channel key'} circuit ${to === 'open' ? 'opened' : 'closed'}`,
        ),
    },
  });
  metrics.watchChannels(() => routeHealth.states());
  // Channels, models and routing live in the table, which a reload replaces; everything below reads them through it.
  // Test keys go to the embedded sandbox if this process runs one, else to test_mode.sandbox_url.
  const testSandboxUrl = options.sandboxUrl ?? config.test_mode.sandbox_url;
  const table = createRoutingTable(buildRoutes(config, metrics, undefined, testSandboxUrl), {
    health: routeHealth,
    retireAfterMs: config.limits.request_timeout_ms,
  });
  const { catalogue } = table;
  const health = new StoreHealth(logger);
  const settlements = createSettlements({
    store,
    health,
    metrics,
    log: logger,
    firstRetryMs: config.recovery.settle_retry_ms,
    journalPath: path.join(config.data_dir, 'pending-settlements.jsonl'),
  });
  const progress = createProgressRecorder({ store, intervalMs: config.recovery.progress_interval_ms, log: logger });
  // No call outlives request_timeout_ms (the pipeline stops it there): holds from before
  // instances existed are ended once older than that, plus a minute for their settlement.
  const instance = createInstance({
    store,
    health,
    log: logger,
    onStoreBack: () => settlements.retryNow(),
    heartbeatMs: config.recovery.heartbeat_ms,
    deadAfterMs: config.recovery.dead_after_ms,
    sweepMs: config.recovery.sweep_ms,
    legacyHoldAgeMs: config.limits.request_timeout_ms + 60_000,
    metrics,
  });
  metrics.watchMoney({ storeWritable: () => health.ok, pendingSettlements: () => settlements.pending() });
  const prices = createPriceBook({
    db: store.db,
    refreshMs: config.prices.refresh_ms,
    onError: (err) => logger.warn({ err }, 'reading price changes failed; the next interval tries again'),
  });
  await prices.refresh(true);
  // The configured price lists, stored before the first call: a call at them writes no row of its own.
  await savePriceLists(
    store,
    [...table.catalogue.list(), ...table.testCatalogue.list()].map((model) => model.config.price),
  );
  const pipeline = createPipeline({
    store,
    catalogue,
    testCatalogue: table.testCatalogue,
    limiter,
    defaultRpm: config.limits.default_rpm,
    metrics,
    callTimeoutMs: config.limits.request_timeout_ms,
    health,
    settlements,
    progress,
    instanceId: instance.id,
    routing: table.routing,
    prices,
  });
  const handlers = {
    image: imageHandler({ publicUrl: config.public_url }),
    video: videoHandler(),
    erase: eraseHandler(),
    minutes: minutesHandler({
      catalogueFor: pipeline.catalogueFor,
      publicUrl: config.public_url,
      resultFiles: { allowPrivate: config.network.allow_private_urls, maxBytes: config.files.result_file_max_bytes },
    }),
  };
  const tasks = { store, pipeline, handlers, pollIntervalMs: config.tasks.poll_interval_ms, submitLeaseMs: config.tasks.submit_lease_ms };
  const engine = createTaskEngine({
    store,
    catalogue,
    testCatalogue: table.testCatalogue,
    handlers,
    pollIntervalMs: config.tasks.poll_interval_ms,
    leaseMs: config.tasks.lease_ms,
    tickMs: config.tasks.tick_ms,
    taskTimeoutMs: config.tasks.timeout_ms,
    maxGenerationAttempts: config.tasks.max_generation_attempts,
    log: logger,
    metrics,
  });
  const webhooks = createWebhookDeliverer({
    store,
    retryDelaysMs: config.webhooks.retry_delays_ms,
    timeoutMs: config.webhooks.timeout_ms,
    perReceiverConcurrency: config.webhooks.per_receiver_concurrency,
    maxInFlight: config.webhooks.max_in_flight,
    allowPrivate: config.network.allow_private_urls,
    log: logger,
    metrics,
    pollIntervalMs: config.webhooks.poll_interval_ms,
  });
  // An upload waits in the spool only while its request runs, and no request outlives request_timeout_ms.
  const fileSweeper = createFileSweeper({
    store,
    intervalMs: config.files.sweep_ms,
    log: logger,
    spool: { dir: uploadSpoolDir(config.data_dir), maxAgeMs: config.limits.request_timeout_ms + 60_000 },
    expiredRows: (now) => deleteExpiredSignIns(store, now),
  });
  const lowBalance = createLowBalanceSweeper({ store, intervalMs: config.low_balance.sweep_ms, log: logger });
  const channels = channelsAdmin({
    routes: () => table.current(),
    health: routeHealth,
    limiter,
    sharedLimits: config.limits.redis !== undefined,
    storeWritable: () => health.ok,
  });
  const reload = createReloader({
    file: options.configFile,
    running: config,
    adminTokenGenerated: options.adminTokenGenerated ?? false,
    table,
    health: routeHealth,
    observer: metrics,
    log: logger,
    onReloaded: options.onReloaded,
  });
  // Batches run in this process, each line through the routes above as the batch's key (batches/).
  const batchLines = createBatchLineAuth(store);
  keys.batchLine = batchLines.resolve;
  const batches = createBatchRunner({
    store,
    auth: batchLines,
    instanceId: instance.id,
    deadAfterMs: config.recovery.dead_after_ms,
    filesDir: storedFilesDir(config.data_dir),
    fileTtlMs: config.files.ttl_ms,
    linesPerAccount: config.batches.lines_per_account,
    tickMs: config.batches.tick_ms,
    log: logger,
  });
  const app = await buildServer({ config, store, pipeline, tasks, keys, metrics, logger, health, channels, reload, batches });
  const closeQuietConnections = quietConnectionCloser(app.server);

  // Ends a previous run left waiting first, then the holds of instances that died.
  await settlements.replayJournal();
  await instance.start();

  let metricsServer: { url: string; close(): Promise<void> } | undefined;
  return {
    app,
    store,
    keyUse,
    reload,
    async listen() {
      // Before the first caller: a model's tokenizer takes most of a second to build, and a
      // first call that built it would stall every other connection meanwhile.
      loadTokenizers(Object.values(config.models).map((model) => model.tokenizer));
      const url = await app.listen({ host: config.host, port: config.port });
      if (config.metrics.port !== undefined) {
        const allowed = metricsAccess(config.metrics, config.admin_token);
        metricsServer = await startMetricsServer({ host: config.host, port: config.metrics.port, allowed, registry: metrics.registry });
        logger.info({ url: metricsServer.url }, 'metrics served on their own port');
      }
      // Background work starts once the gateway serves: unfinished tasks and webhooks of an
      // earlier run are picked up here, from the store.
      engine.start();
      webhooks.start();
      fileSweeper.start();
      lowBalance.start();
      prices.start();
      batches.start(app);
      return url;
    },
    async close() {
      await metricsServer?.close();
      // Before the server closes: running batch lines go through it. One still running after the
      // grace period is failed as interrupted by the next start (batches/runner.ts).
      await batches.stop(config.limits.shutdown_grace_ms);
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          logger.warn({ graceMs: config.limits.shutdown_grace_ms }, 'requests still running after the grace period; closing them');
          app.server.closeAllConnections();
          resolve();
        }, config.limits.shutdown_grace_ms);
      });
      // A keep-alive connection whose last response ends after close began would stay open until
      // the grace period: it is closed as soon as it carries no request, so a finished stream lets
      // the process go (quiet-connections.ts).
      const quietCloser = setInterval(closeQuietConnections, QUIET_CLOSE_EVERY_MS);
      await Promise.race([app.close(), grace]);
      clearTimeout(timer);
      clearInterval(quietCloser);
      await pipeline.settled();
      await progress.flush();
      progress.stop();
      // Ends the store still refuses stay in the journal for the next start.
      await settlements.drain(config.limits.shutdown_grace_ms);
      settlements.stop();
      await instance.stop();
      prices.stop();
      await Promise.allSettled([engine.stop(), webhooks.stop(), fileSweeper.stop(), lowBalance.stop(), keyUse.stop()]);
      await Promise.allSettled([table.close(), limiter.close()]);
      await store.close();
    },
  };
}
