// JSON schemas of the account API's keys (/v1/account/keys): listing, issuing with limits,
// changing limits, revoking. Limits are enforced on every endpoint and task kind (billing/key-limits.ts).
import { CHANGE_ERRORS, Id, instant, instantOrNull, LIMITED_KEY_ERROR, READ_ERRORS, stringOrNull, tags } from './account.js';
import { errorResponses } from './errors.js';

const microsOrNull = (description: string) => ({ type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description }) as const;

/** The limits a key may carry, as they are given and as they are shown; null means none. */
const LIMIT_PROPERTIES = {
  rpm: {
    type: ['integer', 'null'],
    minimum: 1,
    description: 'Requests per minute allowed to this key (at most the gateway default); null for the default. A key with an rpm counts as limited.',
  },
  allowed_models: {
    type: ['array', 'null'],
    items: { type: 'string', minLength: 1, maxLength: 200 },
    minItems: 1,
    maxItems: 100,
    uniqueItems: true,
    description: 'The model ids (or aliases) this key may call; any other is refused with 403. Null: any model.',
  },
  daily_cap_micros: microsOrNull(
    'Most this key may spend per UTC day, counting calls running now at their hold; past it calls are refused with 402 billing_error. Null: no cap.',
  ),
  monthly_cap_micros: microsOrNull('Most this key may spend per UTC calendar month, as daily_cap_micros. Null: no cap.'),
  expires_at: instantOrNull('When the key stops working (refused with 401 from then on); null: never.'),
} as const;

export const Key = {
  type: 'object',
  required: ['id', 'prefix', 'name', 'created_at', 'last_used_at', 'revoked_at', ...Object.keys(LIMIT_PROPERTIES), 'spend'],
  properties: {
    id: { type: 'string', description: 'The key id (key_…), used to revoke it.' },
    prefix: { type: 'string', description: 'The first characters of the key, to recognise it; the rest is never stored.' },
    name: stringOrNull('The name given when the key was created.'),
    created_at: instant('When the key was created.'),
    last_used_at: instantOrNull('When the key last authenticated a request, to within a few seconds (written in batches); null if never.'),
    revoked_at: instantOrNull('When the key was revoked; null while it works.'),
    ...LIMIT_PROPERTIES,
    spend: {
      type: ['object', 'null'],
      description: 'For a key with a spend cap: what it has spent or holds this UTC day and month, in micros. Null without a cap.',
      required: ['day_micros', 'month_micros'],
      properties: { day_micros: { type: 'integer' }, month_micros: { type: 'integer' } },
    },
  },
} as const;

const KeyIdParams = { type: 'object', required: ['id'], properties: { id: Id('The key id (key_…).') } } as const;

// A key that carries limits, rpm included, may not issue or change keys: it could otherwise lift its own limits.
const KEY_CHANGE_ERRORS = { ...errorResponses(400), ...CHANGE_ERRORS, ...LIMITED_KEY_ERROR };

export const ListKeysSchema = {
  tags,
  summary: 'The account’s API keys, newest first, revoked ones included, with their limits.',
  response: {
    200: { description: 'The keys.', type: 'object', required: ['data'], properties: { data: { type: 'array', items: Key } } },
    ...READ_ERRORS,
  },
};

export const CreateKeySchema = {
  tags,
  summary: 'A new API key on the account, with limits if given. Its rpm is at most the gateway default.',
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: { name: { type: 'string', minLength: 1, maxLength: 200, description: 'A name to recognise the key by.' }, ...LIMIT_PROPERTIES },
  },
  response: {
    201: {
      description: 'The key, with its secret shown this once: only its hash is kept.',
      type: 'object',
      required: [...Key.required, 'key'],
      properties: { ...Key.properties, key: { type: 'string', description: 'The API key (tr-…). Store it now: it is never shown again.' } },
    },
    ...KEY_CHANGE_ERRORS,
  },
};

export const UpdateKeySchema = {
  tags,
  summary: 'Changes a key’s name or limits; fields left out stay as they are, null removes a limit. Takes effect within a second.',
  params: KeyIdParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { name: { type: 'string', minLength: 1, maxLength: 200, description: 'A name to recognise the key by.' }, ...LIMIT_PROPERTIES },
  },
  response: { 200: { ...Key, description: 'The key as it is now.' }, ...errorResponses(404), ...KEY_CHANGE_ERRORS },
};

export const RevokeKeySchema = {
  tags,
  summary: 'Revokes a key of the account at once; revoking a revoked key changes nothing. A key with limits may revoke only keys with limits.',
  params: KeyIdParams,
  response: { 200: { ...Key, description: 'The key, revoked.' }, ...errorResponses(404), ...CHANGE_ERRORS, ...LIMITED_KEY_ERROR },
};
