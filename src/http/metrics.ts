// Prometheus metrics: requests, their latency, upstream latency and amounts billed.
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { auth } from '../errors.js';
import type { PipelineMetrics } from '../pipeline/metered-call.js';
import type { HoldLogFields } from '../pipeline/types.js';
import type { ChannelState } from '../routing/breaker.js';
import type { ConnectionWaitObserver } from '../upstreams/pool.js';
import { bearerMatcher } from './auth.js';
import type { KeyLookupResult } from './key-resolver.js';
import { CallCounter, CallHistogram } from './metric-series.js';
import { requestLineWriter } from './request-line.js';
import { MetricsSchema } from './schemas/operations.js';
import { serializedAsBuilt } from './serialized-as-built.js';
import type { ServerTimingObserver } from './server-timing.js';

export interface GatewayMetrics extends PipelineMetrics, ConnectionWaitObserver, ServerTimingObserver {
  registry: Registry;
  /** A webhook attempt recorded (fits webhooks/deliverer.ts, which http/ does not import). */
  observeWebhookAttempt(outcome: string, lateSeconds: number): void;
  observeRequest(labels: { method: string; route: string; status: string }, seconds: number): void;
  /** Gauges read at scrape time: whether the store takes writes, and settlements waiting for it. */
  watchMoney(read: { storeWritable(): boolean; pendingSettlements(): number }): void;
  /** A gauge read at scrape time: 1 while Redis fails and limits are per instance. */
  watchLimiter(read: { degraded(): boolean }): void;
  countKeyLookup(result: KeyLookupResult): void;
  /** One attempt on a channel (failovers included), by outcome: ok, unreachable, server_error, key_refused, rate_limited, released. */
  countChannelAttempt(channel: string, outcome: string): void;
  /** A gauge read at scrape time: each channel's circuit. */
  watchChannels(read: () => { channel: string; state: ChannelState }[]): void;
}

/** The circuit state gauge's values: the higher, the further out of traffic. */
const CIRCUIT_GAUGE: Record<ChannelState, number> = { closed: 0, half_open: 1, open: 2, disabled: 3 };

export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'tollroute_' });
  // What every call records: CallCounter and CallHistogram (metric-series.ts), cheaper per call than prom-client's.
  const requests = new CallCounter({
    name: 'tollroute_http_requests_total',
    help: 'HTTP requests answered',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const latency = new CallHistogram({
    name: 'tollroute_http_request_duration_seconds',
    help: 'Time from request to the end of the answer (streams included)',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  const gatewayTime = new CallHistogram({
    name: 'tollroute_gateway_time_seconds',
    help: "The gateway's own time per answer: arrival to the answer's headers, less the upstream's time",
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5],
    registers: [registry],
  });
  const upstream = new CallHistogram({
    name: 'tollroute_upstream_duration_seconds',
    help: 'Upstream call time, to the last byte',
    labelNames: ['model', 'channel', 'outcome'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  const billed = new CallCounter({ name: 'tollroute_billed_micros_total', help: 'Amounts settled, in micros', labelNames: ['model'], registers: [registry] });
  const unbilled = new Counter({
    name: 'tollroute_unbilled_micros_total',
    help: 'Usage beyond the hold plus overdraft: recorded on the usage row, not taken',
    labelNames: ['model'],
    registers: [registry],
  });
  const clamped = new Counter({
    name: 'tollroute_usage_clamped_total',
    help: 'Upstream usage figures that were not sane and were clamped',
    labelNames: ['model'],
    registers: [registry],
  });
  const authFailures = new Counter({
    name: 'tollroute_upstream_auth_failures_total',
    help: 'Upstream refusals of the channel credentials (401/403): an operator alert',
    labelNames: ['channel'],
    registers: [registry],
  });
  const webhookAttempts = new Histogram({
    name: 'tollroute_webhook_attempt_lateness_seconds',
    help: 'Webhook attempts made, by outcome, and how long after their due time each started',
    labelNames: ['outcome'],
    buckets: [0.1, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  const connectionWait = new CallHistogram({
    name: 'tollroute_upstream_connection_wait_seconds',
    help: 'Time a call waited for a connection of its channel (queue and connect), timed-out waits included',
    labelNames: ['channel'],
    buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const connectionWaitTimeouts = new Counter({
    name: 'tollroute_upstream_connection_wait_timeouts_total',
    help: 'Calls refused (502, released) after waiting connection_wait_ms for a connection',
    labelNames: ['channel'],
    registers: [registry],
  });
  const keyLookups = new Counter({
    name: 'tollroute_api_key_lookups_total',
    help: 'API keys looked up in the store (memory answers the rest)',
    labelNames: ['result'],
    registers: [registry],
  });
  const channelAttempts = new CallCounter({
    name: 'tollroute_channel_attempts_total',
    help: 'Attempts sent to each channel, failovers included, by outcome (all but ok and released are errors); latency is tollroute_upstream_duration_seconds',
    labelNames: ['channel', 'outcome'],
    registers: [registry],
  });
  let channels: () => { channel: string; state: ChannelState }[] = () => [];
  new Gauge({
    name: 'tollroute_channel_circuit_state',
    help: "Each channel's circuit on this instance: 0 closed, 1 half-open, 2 open, 3 disabled by the operator",
    labelNames: ['channel'],
    registers: [registry],
    collect() {
      for (const { channel, state } of channels()) this.set({ channel }, CIRCUIT_GAUGE[state]);
    },
  });
  let limiter = { degraded: () => false };
  new Gauge({
    name: 'tollroute_rate_limiter_degraded',
    help: '1 while Redis fails and each instance enforces rate limits alone',
    registers: [registry],
    collect() {
      this.set(limiter.degraded() ? 1 : 0);
    },
  });
  let money = { storeWritable: () => true, pendingSettlements: () => 0 };
  new Gauge({
    name: 'tollroute_store_writable',
    help: '1 while the store takes writes, 0 while it refuses them',
    registers: [registry],
    collect() {
      this.set(money.storeWritable() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'tollroute_pending_settlements',
    help: 'Hold ends waiting for the store to take them',
    registers: [registry],
    collect() {
      this.set(money.pendingSettlements());
    },
  });

  return {
    registry,
    observeUpstream: ({ model, channel, outcome }, seconds) => upstream.observe([model, channel, outcome], seconds),
    addBilled: (model, amount) => billed.inc([model], amount),
    addUnbilled: (model, amount) => unbilled.inc({ model }, amount),
    countClamped: (model) => clamped.inc({ model }),
    countUpstreamAuthFailure: (channel) => authFailures.inc({ channel }),
    observeWebhookAttempt: (outcome, lateSeconds) => webhookAttempts.observe({ outcome }, lateSeconds),
    watchMoney: (read) => {
      money = read;
    },
    watchLimiter: (read) => {
      limiter = read;
    },
    observeConnectionWait: (channel, seconds) => connectionWait.observe([channel], seconds),
    countConnectionWaitTimeout: (channel) => connectionWaitTimeouts.inc({ channel }),
    countKeyLookup: (result) => keyLookups.inc({ result }),
    countChannelAttempt: (channel, outcome) => channelAttempts.inc([channel, outcome]),
    watchChannels: (read) => {
      channels = read;
    },
    observeGatewayTime: (seconds) => gatewayTime.observe([], seconds),
    observeRequest({ method, route, status }, seconds) {
      requests.inc([method, route, status]);
      latency.observe([method, route], seconds);
    },
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What the request's log line carries beside its answer: a metered call's hold end (addToLogLine). */
    logLineFields: HoldLogFields | undefined;
    logLineWritten: boolean;
  }
}

/**
 * For the pipeline: puts a metered call's hold end into the request's one log line, unless that
 * line went out already (then it answers false and the caller logs a line of its own).
 */
export const addToLogLine =
  (request: FastifyRequest) =>
  (fields: HoldLogFields): boolean => {
    if (request.logLineWritten) return false;
    request.logLineFields = fields;
    return true;
  };

/**
 * Where /metrics is served: on the gateway's port unless `port` moves it to its own listener (see
 * metrics-server.ts), behind `Authorization: Bearer` with the admin token or `token`, unless `public`.
 */
export interface MetricsExposure {
  token?: string;
  port?: number;
  public?: boolean;
}

export const METRICS_REFUSED = 'invalid or missing token: /metrics needs the admin token or metrics.token (or metrics.public: true)';

/**
 * Who may read /metrics: the operator (the admin token) or a scraper given metrics.token; anyone
 * when the operator made it public. The amounts billed per model are the operator's business.
 */
export function metricsAccess(exposure: MetricsExposure, adminToken: string): (authorization: string | undefined) => boolean {
  if (exposure.public) return () => true;
  const admin = bearerMatcher(adminToken);
  const scraper = exposure.token ? bearerMatcher(exposure.token) : () => false;
  return (authorization) => admin(authorization) || scraper(authorization);
}

/**
 * Counts and logs every answer once, when its response ends: streams included (Fastify's own
 * request logging, off in server.ts, would miss hijacked streams). A metered call's hold end rides
 * in the same line: one line per call. After registerServerTiming: it stamps each request's arrival.
 */
export function registerRequestMetrics(
  app: FastifyInstance,
  { metrics, logger, exposure = {}, adminToken }: { metrics: GatewayMetrics; logger: FastifyBaseLogger; exposure?: MetricsExposure; adminToken: string },
) {
  app.decorateRequest('logLineFields', undefined);
  app.decorateRequest('logLineWritten', false);
  // The logger the gateway was given: Fastify's app.log is a child of it, which requestLineWriter would not recognise.
  const writeRequestLine = requestLineWriter(logger);
  // A callback hook, not an async one: no promise per request for work that never waits.
  app.addHook('onRequest', (request, reply, done) => {
    reply.raw.once('close', () => {
      const seconds = (performance.now() - request.arrivedAt) / 1000;
      const statusCode = reply.raw.statusCode;
      metrics.observeRequest({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(statusCode) }, seconds);
      request.logLineWritten = true;
      const query = request.url.indexOf('?');
      writeRequestLine(request, {
        method: request.method,
        url: query === -1 ? request.url : request.url.slice(0, query),
        statusCode,
        complete: reply.raw.writableFinished,
        responseTimeMs: Math.round(seconds * 1e4) / 10,
        hold: request.logLineFields,
      });
    });
    done();
  });
  if (exposure.port !== undefined) return;
  const allowed = metricsAccess(exposure, adminToken);
  app.get('/metrics', { schema: MetricsSchema, ...serializedAsBuilt }, async (request, reply) => {
    if (!allowed(request.headers.authorization)) throw auth(METRICS_REFUSED);
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
