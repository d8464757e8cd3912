// The operator's admin API (/admin), behind the admin token: what each route takes and answers.
import { AccountSchema, Secret, Usage } from './account.js';
import { errorResponse, errorResponses } from './errors.js';
import { LimitParam } from './query.js';

const micros = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const instant = { type: 'string', format: 'date-time' } as const;
const tags = ['admin'];

const IdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, description: 'The account id (acct_…), or for DELETE /admin/keys the key id.' } },
} as const;
const ListQuery = { type: 'object', properties: { limit: { ...LimitParam, description: 'At most this many rows, newest first: 1 to 1000.' } } } as const;

const ERRORS = {
  ...errorResponses(400),
  ...errorResponse(401, 'No admin token, or a wrong one.'),
  ...errorResponses(404, 503),
};

const Account = AccountSchema.response[200];

export const CreateAccountSchema = {
  tags,
  summary: 'Creates an account, with an opening credit if given.',
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      credit_micros: { ...micros, description: 'An opening credit, in micros.' },
      overdraft_micros: { ...micros, description: 'How far below zero a settle may take the balance (0 by default).' },
    },
  },
  response: { 201: { ...Account, description: 'The account.' }, ...ERRORS },
};

export const GetAccountSchema = {
  tags,
  summary: 'An account, with its test balance beside the live one.',
  params: IdParams,
  response: {
    200: {
      ...Account,
      required: [...Account.required, 'test_balance_micros', 'test_held_micros'],
      properties: {
        ...Account.properties,
        test_balance_micros: { ...micros, description: 'The test balance test keys draw on (docs/api.md “Test mode”); 0 before it is first used.' },
        test_held_micros: { ...micros, description: 'Test funds held by test calls running now.' },
        suspended_at: { type: ['string', 'null'], format: 'date-time', description: 'When the operator suspended the account; null while it may call.' },
      },
    },
    ...ERRORS,
  },
};

export const CreditAccountSchema = {
  tags,
  summary: 'Credits an account (a ledger row).',
  params: IdParams,
  body: {
    type: 'object',
    required: ['amount_micros'],
    additionalProperties: false,
    properties: { amount_micros: { ...micros, minimum: 1 }, note: { type: 'string', maxLength: 500, description: 'Kept on the ledger row.' } },
  },
  response: { 200: { ...Account, description: 'The account after the credit.' }, ...ERRORS },
};

export const IssueKeySchema = {
  tags,
  summary: 'Issues an API key on an account.',
  params: IdParams,
  body: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', maxLength: 200 },
      rpm: { type: 'integer', minimum: 1, description: 'Requests per minute; the gateway default when absent.' },
    },
  },
  response: {
    201: {
      description: 'The key, shown this once: only its hash is stored.',
      type: 'object',
      properties: {
        id: { type: 'string' },
        key: { type: 'string', description: 'The API key (tr-…).' },
        prefix: { type: 'string' },
        name: { type: ['string', 'null'] },
        rpm: { type: ['integer', 'null'] },
        created_at: instant,
      },
    },
    ...ERRORS,
  },
};

export const IssueTestKeySchema = {
  ...IssueKeySchema,
  summary: 'Issues a test key (tr-test-…) on the account: served by the sandbox alone, on the test balance.',
  description:
    'The key belongs to the account’s test twin, made on first need: a second account row that holds the test balance, so test money never mixes with live money. A test key reaches no real channel, whatever model it names.',
};

export const TestCreditSchema = {
  ...CreditAccountSchema,
  summary: 'Credits the account’s test balance (a ledger row on its test twin); test funds are free to add.',
  response: {
    200: { ...GetAccountSchema.response[200], description: 'The account, test balance included, after the credit.' },
    ...ERRORS,
  },
};

export const LoginLinkSchema = {
  tags,
  summary: 'A one-time console sign-in link for the account’s holder.',
  params: IdParams,
  response: {
    201: {
      description: 'The link (its token is shown this once), good once until it expires.',
      type: 'object',
      properties: { url: { type: 'string', description: '<public_url>/dashboard/login#token=…' }, expires_at: instant },
    },
    ...ERRORS,
  },
};

export const RevokeKeySchema = {
  tags,
  summary: 'Revokes a key at once.',
  params: IdParams,
  response: {
    200: { description: 'Revoked.', type: 'object', properties: { id: { type: 'string' }, revoked: { type: 'boolean', enum: [true] } } },
    ...ERRORS,
  },
};

const LedgerRow = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: ['credit', 'hold', 'settle', 'release', 'debit'] },
    amount_micros: { type: 'integer', description: 'What the row did to the account’s total (balance + held).' },
    balance_delta_micros: { type: 'integer' },
    held_delta_micros: { type: 'integer' },
    hold_id: { type: ['string', 'null'] },
    request_id: { type: ['string', 'null'] },
    model: { type: ['string', 'null'] },
    note: { type: ['string', 'null'] },
    created_at: instant,
  },
} as const;

const list = (item: object, description: string) => ({ description, type: 'object', properties: { data: { type: 'array', items: item } } });

export const LedgerSchema = {
  tags,
  summary: 'The account’s ledger, newest first: every movement of its funds.',
  params: IdParams,
  querystring: ListQuery,
  response: { 200: list(LedgerRow, 'The ledger rows.'), ...ERRORS },
};

export const AdminUsageSchema = {
  tags,
  summary: 'The account’s usage records, newest first.',
  params: IdParams,
  querystring: ListQuery,
  response: { 200: list(Usage, 'The usage rows.'), ...ERRORS },
};

export const AdminWebhookSecretSchema = {
  tags,
  summary: 'The account’s webhook signing secret.',
  params: IdParams,
  response: { 200: { ...Secret, description: 'The current secret.' }, ...ERRORS },
};

export const AdminRotateWebhookSecretSchema = {
  tags,
  summary: 'Replaces the account’s webhook signing secret.',
  params: IdParams,
  response: { 200: { ...Secret, description: 'The new secret.' }, ...ERRORS },
};

const Access = (description: string) => ({
  description,
  type: 'object',
  required: ['id', 'suspended_at', 'sessions_ended'],
  properties: {
    id: { type: 'string' },
    suspended_at: { type: ['string', 'null'], format: 'date-time', description: 'When the account was suspended; null when it may call.' },
    sessions_ended: { type: 'integer', minimum: 0, description: 'Console sessions of the account this call ended.' },
  },
});

export const SuspendAccountSchema = {
  tags,
  summary: 'Suspends an account: its keys (live and test) are refused with 403 from now on, and its console sessions end.',
  description:
    'Takes effect at once on this instance and within a second on others. Calls already running finish and are billed; tasks already submitted run to their end. Suspending a suspended account keeps its first time.',
  params: IdParams,
  response: { 200: Access('The account, suspended.'), ...ERRORS },
};

export const ResumeAccountSchema = {
  tags,
  summary: 'Resumes a suspended account: its keys work again; its holder signs in to the console anew.',
  params: IdParams,
  response: { 200: Access('The account, resumed.'), ...ERRORS },
};

export const EndSessionsSchema = {
  tags,
  summary: 'Ends every console session of the account (its holder must sign in again); its keys keep working.',
  params: IdParams,
  response: { 200: Access('The account, with how many sessions were ended.'), ...ERRORS },
};

export const ReloadSchema = {
  tags,
  summary: 'Reads the configuration file again and applies its channels, models and routing.',
  description:
    'The same as sending the gateway SIGHUP, on this instance. Calls that start from now on use the new channels, models (prices included) and routing settings; calls in flight finish on the configuration they started with. Every other section needs a restart: the answer names each such field the file changed, which stays as it was. A file that cannot be read or fails validation is refused and nothing changes.',
  response: {
    200: {
      description: 'The file was applied.',
      type: 'object',
      required: ['reloaded', 'channels', 'models', 'not_applied'],
      properties: {
        reloaded: { type: 'boolean', enum: [true] },
        channels: { type: 'integer', minimum: 0, description: 'Channels configured now.' },
        models: { type: 'integer', minimum: 0, description: 'Models configured now.' },
        not_applied: {
          type: 'array',
          items: { type: 'string' },
          description:
            'Fields outside channels, models and routing that the file changed (by dotted path, e.g. limits.default_rpm): they take effect at the next restart.',
        },
      },
    },
    ...errorResponse(400, 'The file cannot be read or is invalid; the message names the field at fault. The running configuration stays.'),
    ...errorResponse(401, 'No admin token, or a wrong one.'),
    ...errorResponse(409, 'The gateway started without a configuration file (the built-in catalogue): there is nothing to reload.'),
  },
};
