// Operating the gateway: its health and its metrics.
import { errorResponse, errorResponses } from './errors.js';

const tags = ['operations'];

export const HealthSchema = {
  tags,
  summary: 'Healthy while the process serves and its store answers and takes writes.',
  response: {
    200: { description: 'Healthy.', type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } },
    ...errorResponse(503, 'Shutting down, or the store is unreachable or refuses writes (since when, and why, in the message).'),
  },
};

export const MetricsSchema = {
  tags,
  summary: 'Prometheus metrics: requests, latency, upstream latency, amounts billed.',
  description:
    'Served here unless `metrics.port` moves it to a listener of its own. Needs the admin token or `metrics.token`, unless the operator set `metrics.public: true`.',
  security: [{ adminToken: [] }, { metricsToken: [] }] as Record<string, string[]>[],
  response: {
    200: { description: 'The Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } },
    ...errorResponse(401, 'The request carried neither the admin token nor `metrics.token`, and metrics are not public.'),
    ...errorResponses(503),
  },
};
