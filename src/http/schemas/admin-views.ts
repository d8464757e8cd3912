// The admin API's read-only lists behind the operator's view in the console: accounts, an
// account's keys and sign-in links, and the channels. None of them carries a secret: a key's hash,
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

const Channel = {
  type: 'object',
  required: ['name', 'kind', 'origin', 'models', 'connections', 'connection_wait_ms'],
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
  },
} as const;

export const ListChannelsSchema = {
  tags,
  summary: 'The configured channels and their live state on this instance.',
  description:
    'The gateway keeps no per-channel health or breaker (a failing upstream fails its calls, released); what it keeps is each channel’s connection pool, the rate limiter’s breaker on Redis and whether the store takes writes.',
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
