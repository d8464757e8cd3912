// POST /v1/search: Type (or model) routes; Query, Count and SearchType are checked here,
// every other field goes to the upstream as sent.
import { METERED_ERRORS } from './errors.js';
import { headers, IdempotencyKeyHeader } from './headers.js';

export const SearchBody = {
  type: 'object',
  description: 'A search request; fields not named here go to the upstream as sent.',
  required: ['Query'],
  properties: {
    Type: { type: 'string', enum: ['web', 'global'], description: 'The product line: web (vendor-web-search) or global (vendor-global-search).' },
    model: { type: 'string', minLength: 1, description: 'A search model, instead of Type (or agreeing with it).' },
    Query: { type: 'string', minLength: 1, description: 'What to search for.' },
    Count: {
      type: 'integer',
      minimum: 1,
      maximum: 50,
      description: 'Results wanted, 10 by default. Global search returns at most 20: a larger Count is sent as 20 and the answer says so in CountCapped.',
    },
    SearchType: { type: 'string', enum: ['web', 'image'], description: 'web; image search is refused.' },
  },
} as const;

export const SearchSchema = {
  tags: ['search'],
  summary: 'Web or global search, billed one call on success and nothing on failure.',
  body: SearchBody,
  docsOnly: { headers: headers(IdempotencyKeyHeader) },
  response: {
    200: {
      description:
        'The upstream’s result as it sent it, without the routing fields (Type, model); with `CountCapped: {Requested, Sent}` when the Count asked for was more than the product returns.',
      type: 'object',
      additionalProperties: true,
    },
    ...METERED_ERRORS,
  },
};
