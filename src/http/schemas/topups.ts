// JSON schemas of top-ups: redemption batches (admin API), redeeming a code and the account's
// top-ups (account API).
import { CHANGE_ERRORS, instant, instantOrNull, micros, page, query, READ_ERRORS, stringOrNull, tags } from './account.js';
import { errorResponse, errorResponses } from './errors.js';
import { CursorParam, LimitParam, PageLimitParam } from './query.js';

const MAX_CODES = 1000;

const RedemptionBatch = {
  type: 'object',
  required: ['id', 'name', 'amount_micros', 'count', 'redeemed', 'expires_at', 'created_at'],
  properties: {
    id: { type: 'string', description: 'The batch id (rb_…); the ledger row of each redemption names it.' },
    name: stringOrNull('The operator’s name for the batch.'),
    amount_micros: micros('What each code credits, in micros.'),
    count: { type: 'integer', description: 'How many codes the batch holds.' },
    redeemed: { type: 'integer', description: 'How many of them were redeemed.' },
    expires_at: instantOrNull('After this the codes are refused; null: never.'),
    created_at: instant('When the batch was made.'),
  },
} as const;

const ADMIN_ERRORS = { ...errorResponses(400), ...errorResponse(401, 'No admin token, or a wrong one.'), ...errorResponses(503) };

export const CreateRedemptionBatchSchema = {
  tags: ['admin'],
  summary: 'Makes a batch of redemption codes, each worth amount_micros; the codes are answered this once.',
  description: 'Only each code’s sha256 is stored: the answer is the one place the codes exist. Hand each to one account holder.',
  body: {
    type: 'object',
    required: ['amount_micros', 'count'],
    additionalProperties: false,
    properties: {
      amount_micros: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'What each code credits, in micros.' },
      count: { type: 'integer', minimum: 1, maximum: MAX_CODES, description: `How many codes to make, 1 to ${MAX_CODES}.` },
      expires_at: { type: 'string', format: 'date-time', description: 'After this the codes are refused (RFC 3339, in the future); never when absent.' },
      name: { type: 'string', minLength: 1, maxLength: 200, description: 'A name for the batch (a campaign, an invoice).' },
    },
  },
  response: {
    201: {
      ...RedemptionBatch,
      description: 'The batch and its codes, shown this once.',
      required: [...RedemptionBatch.required, 'codes'],
      properties: {
        ...RedemptionBatch.properties,
        codes: { type: 'array', items: { type: 'string' }, description: 'The codes (trc-…), never shown again.' },
      },
    },
    ...ADMIN_ERRORS,
  },
};

export const ListRedemptionBatchesSchema = {
  tags: ['admin'],
  summary: 'The redemption batches, newest first, each with how many of its codes were redeemed (never the codes).',
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { limit: { ...LimitParam, description: 'At most this many batches: 1 to 1000 (100 by default).' } },
  },
  response: {
    200: { description: 'The batches.', type: 'object', required: ['data'], properties: { data: { type: 'array', items: RedemptionBatch } } },
    ...ADMIN_ERRORS,
  },
};

export const RedeemCodeSchema = {
  tags,
  summary: 'Redeems a redemption code: the account is credited with its amount, once.',
  description:
    'A code credits one account once, however many tries race on it. Tries that credit nothing count against the account’s limit per window (`redemption:` in the configuration); past it every try is answered 429 until the window ends. Test keys cannot redeem codes.',
  body: {
    type: 'object',
    required: ['code'],
    additionalProperties: false,
    properties: { code: { type: 'string', minLength: 1, maxLength: 100, description: 'The code (trc-…); case and surrounding spaces do not matter.' } },
  },
  response: {
    200: {
      description: 'The credit and the balance after it.',
      type: 'object',
      required: ['amount_micros', 'balance_micros', 'batch_id'],
      properties: {
        amount_micros: micros('What the code credited.'),
        balance_micros: micros('The account’s balance after the credit.'),
        batch_id: { type: 'string', description: 'The code’s batch, as the ledger row names it.' },
      },
    },
    ...CHANGE_ERRORS,
    ...errorResponses(400),
    ...errorResponse(403, 'A test key (codes credit the live balance only), or a request made with the session cookie from another site’s page.'),
    ...errorResponse(404, 'No such code.'),
    ...errorResponse(409, 'The code has already been redeemed (by this or another account), or has expired.'),
  },
};

const TopUp = {
  type: 'object',
  required: ['id', 'kind', 'amount_micros', 'note', 'description', 'created_at'],
  properties: {
    id: { type: 'integer', description: 'The ledger row id.' },
    kind: { type: 'string', description: 'credit (money in), or debit (a top-up taken back, a refunded card payment).' },
    amount_micros: micros('What the row added to the balance (negative for a debit).'),
    note: stringOrNull('The ledger row’s note: `redemption code batch rb_…`, a card payment’s, or the operator’s own.'),
    description: { type: 'string', description: 'What it was: the note, or `operator credit` for a credit without one.' },
    created_at: instant('When the row was written.'),
  },
} as const;

export const ListTopUpsSchema = {
  tags,
  summary: 'The account’s top-ups (its ledger rows of kind credit and debit), newest first, in pages.',
  querystring: query({ limit: PageLimitParam, cursor: CursorParam }),
  response: { 200: page(TopUp, 'A page of top-ups.'), ...errorResponses(400), ...READ_ERRORS },
};

export const TopUpsCsvSchema = {
  tags,
  summary: 'Every top-up of the account as CSV, newest first.',
  response: {
    200: {
      description: 'The CSV export.',
      content: {
        'text/csv': { schema: { type: 'string', description: 'id,created_at,kind,amount_micros,description, then one line per row (RFC 4180, CRLF).' } },
      },
    },
    ...READ_ERRORS,
  },
};
