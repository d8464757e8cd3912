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
  description: 'Served here unless `metrics.port` moves it to a listener of its own.',
  // No credential unless the operator set `metrics.token`.
  security: [{}, { metricsToken: [] }] as Record<string, string[]>[],
  response: {
    200: { description: 'The Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } },
    ...errorResponse(401, 'metrics.token is set, and the request did not carry it.'),
    ...errorResponses(503),
  },
};
