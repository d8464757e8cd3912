// The admin API's lists behind the operator's view in the console: accounts, an account's keys
// and sign-in links, and the channels (with the operator's switch to disable and enable one). None of them carries a secret: a key's hash,
// a link's token and the webhook secret stay on their own endpoints (or nowhere).
import { AccountSchema } from './account.js';
import { Key } from './account-keys.js';
import { errorResponse, errorResponses } from './errors.js';
import { CursorParam, PageLimitParam } from './query.js';

const tags = ['admin'];
const instant = (description: string) => ({ type: 'string', format: 'date-time', description }) as const;

const ERRORS = {
  ...errorResponses(400),
  ...errorResponse(401, 'No admin token, or a wrong one.'),
  ...errorResponses(404, 503),
};

const IdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, description: 'The account id (acct_…).' } },
} as const;

export const ListAccountsSchema = {
  tags,
  summary: 'Every account, newest first, a page at a time; optionally only those whose name contains some text.',
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: PageLimitParam,
      cursor: CursorParam,
      name: { type: 'string', minLength: 1, maxLength: 200, description: 'Only accounts whose name contains this, case aside.' },
    },
  },
  response: {
    200: {
      description: 'A page of accounts.',
      type: 'object',
      required: ['data', 'next_cursor'],
      properties: {
        data: { type: 'array', items: AccountSchema.response[200], description: 'Newest first.' },
        next_cursor: { type: ['string', 'null'], description: 'Pass as ?cursor= for the next page; null on the last page.' },
      },
    },
    ...ERRORS,
  },
};

export const AdminListKeysSchema = {
  tags,
  summary: 'The account’s API keys, newest first, revoked ones included: never a key or its hash.',
  params: IdParams,
  response: {
    200: { description: 'The keys.', type: 'object', required: ['data'], properties: { data: { type: 'array', items: Key } } },
    ...ERRORS,
  },
};

const LoginLink = {
  type: 'object',
  required: ['id', 'created_at', 'expires_at', 'used_at', 'state'],
  properties: {
    id: { type: 'string', description: 'The link id (link_…).' },
    created_at: instant('When the link was issued.'),
    expires_at: instant('When it stops working if unused.'),
    used_at: { type: ['string', 'null'], format: 'date-time', description: 'When it signed someone in; null while unused.' },
    state: { type: 'string', enum: ['unused', 'used', 'expired'], description: 'Whether it can still sign someone in.' },
  },
} as const;

export const ListLoginLinksSchema = {
  tags,
  summary: 'The sign-in links issued for the account, newest first: never their tokens (only a hash is stored).',
  description: 'Expired links are deleted by the background sweep, so old ones drop off this list.',
  params: IdParams,
  querystring: { type: 'object', additionalProperties: false, properties: { limit: PageLimitParam } },
  response: {
    200: { description: 'The links.', type: 'object', required: ['data'], properties: { data: { type: 'array', items: LoginLink } } },
    ...ERRORS,
  },
};

const rate = { type: 'number', minimum: 0, maximum: 1, description: 'Failed attempts over attempts, in the window (0 with none).' } as const;
const recent = (what: string) => ({ type: 'integer', description: `${what} attempts in the window: the last 100 within the last minute.` }) as const;
const until = (description: string) => ({ type: ['string', 'null'], format: 'date-time', description }) as const;

const ChannelKey = {
  type: 'object',
  required: ['key', 'state', 'requests', 'error_rate', 'rested_until'],
  properties: {
    key: { type: 'string', description: 'The key’s fingerprint: the first 8 hex of its sha256 (as in the logs). Never the key or any part of it.' },
    state: { type: 'string', enum: ['closed', 'open', 'half_open'], description: 'The key’s own breaker: a refused key (401/403) opens at once.' },
    requests: recent('Its'),
    error_rate: rate,
    rested_until: until('Set while a 429 rests the key (its Retry-After); null otherwise.'),
  },
} as const;

const Channel = {
  type: 'object',
  required: [
    'name',
    'kind',
    'origin',
    'models',
    'connections',
    'connection_wait_ms',
    'state',
    'opens_until',
    'requests',
    'error_rate',
    'latency_ms',
    'last_error',
    'keys',
  ],
  properties: {
    name: { type: 'string', description: 'The channel’s name in the config.' },
    kind: { type: 'string', description: 'Which upstream protocol it speaks (openai, anthropic, …).' },
    origin: { type: 'string', description: 'Scheme, host and port of its base URL: never a path, query or credentials.' },
    models: { type: 'array', items: { type: 'string' }, description: 'The model ids routed to it.' },
    connections: {
      type: 'object',
      required: ['limit', 'in_flight', 'waiting'],
      description: 'Its connection pool on this instance, now.',
      properties: {
        limit: { type: 'integer', description: 'Calls on the wire at once (config `connections`).' },
        in_flight: { type: 'integer', description: 'Calls on the wire now.' },
        waiting: { type: 'integer', description: 'Calls waiting for a free connection now.' },
      },
    },
    connection_wait_ms: { type: 'integer', description: 'How long a call may wait for a connection before it fails unsent.' },
    state: {
      type: 'string',
      enum: ['closed', 'open', 'half_open', 'disabled'],
      description: 'Its breaker on this instance: closed takes calls, open none until opens_until, half_open one probe; disabled by the operator.',
    },
    opens_until: until('While open: when its cool-down ends and one probe may go. Null otherwise.'),
    requests: recent('Its'),
    error_rate: rate,
    latency_ms: {
      type: 'object',
      required: ['p50', 'p99'],
      description: 'Successful attempts’ time to the answer (a stream’s first data), in the window; null with none.',
      properties: { p50: { type: ['integer', 'null'] }, p99: { type: ['integer', 'null'] } },
    },
    last_error: {
      type: ['object', 'null'],
      required: ['message', 'at'],
      description: 'Its last failed attempt, in the gateway’s words (never an upstream body or a key); null if none since start.',
      properties: { message: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
    },
    keys: { type: 'array', items: ChannelKey, description: 'Its upstream keys, in the config’s order; empty for a channel without one.' },
  },
} as const;

export const ListChannelsSchema = {
  tags,
  summary: 'The configured channels and their live state on this instance.',
  description:
    'Each channel’s connection pool, circuit breaker and recent figures, per channel and per key, as this instance sees them (each instance keeps its own); the rate limiter’s breaker on Redis and whether the store takes writes.',
  response: {
    200: {
      description: 'The channels, in the config’s order.',
      type: 'object',
      required: ['data', 'rate_limiter', 'store'],
      properties: {
        data: { type: 'array', items: Channel },
        rate_limiter: {
          type: 'object',
          required: ['shared', 'degraded'],
          properties: {
            shared: { type: 'boolean', description: 'Limits are shared through Redis (limits.redis is set).' },
            degraded: { type: 'boolean', description: 'Redis is failing: this instance enforces limits alone until it answers.' },
          },
        },
        store: {
          type: 'object',
          required: ['writable'],
          properties: { writable: { type: 'boolean', description: 'The store takes writes (else calls are refused with 503).' } },
        },
      },
    },
    ...ERRORS,
  },
};

const ChannelParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, description: 'The channel’s name in the config.' } },
} as const;

const steerSchema = (summary: string, description: string) => ({
  tags,
  summary,
  description,
  params: ChannelParams,
  response: { 200: { ...Channel, description: 'The channel as it is now.' }, ...ERRORS },
});

export const DisableChannelSchema = steerSchema(
  'Takes the channel out of traffic at once, on this instance, until enabled.',
  'No new attempt goes to it (calls on the wire finish); its models fail over to their other channels, or answer 503 when it was their only one. Not kept across a restart, nor shared with other instances.',
);

export const EnableChannelSchema = steerSchema(
  'Puts a disabled channel back in traffic at once, on this instance.',
  'Its circuit breaker is kept as it was: a channel whose circuit is open still waits for its cool-down and one probe.',
);
