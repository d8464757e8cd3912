// JSON schemas of the low-balance settings (billing/low-balance.ts): the account holder's
// settings, the account as GET /v1/account shows it with its threshold, and the operator's
// threshold change and list of accounts below their threshold.
import { AccountSchema, CHANGE_ERRORS, instantOrNull, LIMITED_KEY_ERROR, READ_ERRORS, tags } from './account.js';
import { errorResponse, errorResponses } from './errors.js';
import { CursorParam, PageLimitParam } from './query.js';

const ThresholdMicros = {
  type: ['integer', 'null'],
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description:
    'When the funds (balance + held) fall below this many micros, one signed account.balance_low event is POSTed to webhook_url, once per crossing; null: off.',
} as const;
const WebhookUrl = {
  type: ['string', 'null'],
  minLength: 1,
  maxLength: 2048,
  description: 'Where account events (account.balance_low) are POSTed, signed with the webhook secret; null: nowhere.',
} as const;
const BalanceLow = { type: 'boolean', description: 'Whether the funds (balance + held) are below low_balance_micros now.' } as const;
const Since = instantOrNull('When the current crossing below the threshold was noticed (its event queued); null when not below it, or not noticed yet.');

const Account = AccountSchema.response[200];

export const AccountWithLowBalanceSchema = {
  ...AccountSchema,
  response: {
    ...AccountSchema.response,
    200: {
      ...Account,
      required: [...Account.required, 'low_balance_micros', 'balance_low'],
      properties: { ...Account.properties, low_balance_micros: ThresholdMicros, balance_low: BalanceLow },
    },
  },
};

const Settings = {
  type: 'object',
  required: ['low_balance_micros', 'webhook_url', 'balance_low', 'low_balance_since'],
  properties: { low_balance_micros: ThresholdMicros, webhook_url: WebhookUrl, balance_low: BalanceLow, low_balance_since: Since },
} as const;

export const GetAccountSettingsSchema = {
  tags,
  summary: 'The account’s low-balance threshold and the URL its account events go to.',
  response: { 200: { ...Settings, description: 'The settings.' }, ...READ_ERRORS },
};

export const UpdateAccountSettingsSchema = {
  tags,
  summary:
    'Sets the low-balance threshold or the account events’ URL; fields left out stay as they are, null turns one off. A threshold above the funds is a crossing at once. A key with limits may not.',
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { low_balance_micros: ThresholdMicros, webhook_url: WebhookUrl },
  },
  response: { 200: { ...Settings, description: 'The settings as they are now.' }, ...errorResponses(400), ...CHANGE_ERRORS, ...LIMITED_KEY_ERROR },
};

// ---- the operator's

const ADMIN_ERRORS = { ...errorResponses(400), ...errorResponse(401, 'No admin token, or a wrong one.'), ...errorResponses(404, 503) };

const LowBalanceAccount = {
  type: 'object',
  required: ['id', 'name', 'balance_micros', 'held_micros', 'low_balance_micros', 'balance_low', 'low_balance_since'],
  properties: {
    id: { type: 'string', description: 'The account id (acct_…).' },
    name: { type: 'string' },
    balance_micros: { type: 'integer', description: 'Spendable funds, in micros.' },
    held_micros: { type: 'integer', description: 'Funds held by calls running now.' },
    low_balance_micros: ThresholdMicros,
    balance_low: BalanceLow,
    low_balance_since: Since,
  },
} as const;

export const AdminUpdateAccountSchema = {
  tags: ['admin'],
  summary: 'Sets an account’s low-balance threshold (null: off), as its holder can with PATCH /v1/account/settings.',
  params: {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'string', minLength: 1, description: 'The account id (acct_…).' } },
  },
  body: {
    type: 'object',
    required: ['low_balance_micros'],
    additionalProperties: false,
    properties: { low_balance_micros: ThresholdMicros },
  },
  response: { 200: { ...LowBalanceAccount, description: 'The account’s low-balance state as it is now.' }, ...ADMIN_ERRORS },
};

export const AdminLowBalanceListSchema = {
  tags: ['admin'],
  summary: 'The live accounts whose funds (balance + held) are below their low-balance threshold now, newest first, a page at a time.',
  querystring: { type: 'object', additionalProperties: false, properties: { limit: PageLimitParam, cursor: CursorParam } },
  response: {
    200: {
      description: 'A page of accounts below their threshold.',
      type: 'object',
      required: ['data', 'next_cursor'],
      properties: {
        data: { type: 'array', items: LowBalanceAccount, description: 'Newest account first.' },
        next_cursor: { type: ['string', 'null'], description: 'Pass as ?cursor= for the next page; null on the last page.' },
      },
    },
    ...ADMIN_ERRORS,
  },
};
