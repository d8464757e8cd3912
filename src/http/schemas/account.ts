// JSON schemas of the account API (/v1/account): what each route takes and answers, every field
// described, so an OpenAPI document can be generated from the routes. Query values are text
// (schemas never coerce); unknown query fields are refused, so a misspelt filter is a 400, not a
// silently unfiltered answer.
import { errorResponse, errorResponses } from './errors.js';
import { CursorParam, DateTimeParam, PageLimitParam } from './query.js';

export const instant = (description: string) => ({ type: 'string', format: 'date-time', description }) as const;
export const instantOrNull = (description: string) => ({ type: ['string', 'null'], format: 'date-time', description }) as const;
export const stringOrNull = (description: string) => ({ type: ['string', 'null'], description }) as const;
export const micros = (description: string) => ({ type: 'integer', description }) as const;
export const Id = (description: string) => ({ type: 'string', minLength: 1, maxLength: 200, description }) as const;

export const query = (properties: Record<string, object>) => ({ type: 'object', additionalProperties: false, properties }) as const;

/** A page of `item`s and the cursor of the next page. */
export const page = (item: object, description: string) => ({
  description,
  type: 'object',
  required: ['data', 'next_cursor'],
  properties: {
    data: { type: 'array', items: item, description: 'Newest first.' },
    next_cursor: stringOrNull('Pass as ?cursor= for the next page; null on the last page.'),
  },
});

export const tags = ['account'];

// Every route of the API answers these, besides its own.
export const READ_ERRORS = errorResponses(401, 429, 503);
// A change made with the console's cookie from another site's page is refused.
export const CHANGE_ERRORS = { ...errorResponses(403), ...READ_ERRORS };
/** The 403 of what a key with limits may not do (manage keys, the webhook secret), besides a cross-site cookie's. */
export const LIMITED_KEY_ERROR = errorResponse(
  403,
  'The key (or the console session’s key) has limits, its rpm included, so it may not do this; or a request made with the session cookie from another site’s page.',
);

export const AccountSchema = {
  tags,
  summary: 'The account of the API key: its balance and funds held by calls running now.',
  response: {
    200: {
      description: 'The account.',
      type: 'object',
      required: ['id', 'name', 'balance_micros', 'held_micros', 'overdraft_micros', 'created_at'],
      properties: {
        id: { type: 'string', description: 'The account id (acct_…).' },
        name: { type: 'string', description: 'The account name the operator gave.' },
        balance_micros: micros('Spendable funds, in micros (1 unit = 1 000 000 micros).'),
        held_micros: micros('Funds held by calls and tasks still running; settled on their real usage or returned.'),
        overdraft_micros: micros('How far below zero a settle may take the balance.'),
        created_at: instant('When the account was created.'),
      },
    },
    ...READ_ERRORS,
  },
};

// ---- tasks and webhook deliveries

const Task = {
  type: 'object',
  required: ['id', 'kind', 'model', 'status', 'upstream_id', 'request_id', 'error', 'created_at', 'updated_at', 'finished_at', 'livemode'],
  properties: {
    id: { type: 'string', description: 'The task id; its kind’s GET endpoint returns the whole record, result included.' },
    kind: { type: 'string', enum: ['image', 'video', 'erase', 'minutes'], description: 'What the task makes.' },
    model: { type: 'string', description: 'The model the task runs on.' },
    status: {
      type: 'string',
      enum: ['queued', 'processing', 'succeeded', 'failed', 'cancelled'],
      description: 'queued until the upstream starts it (erase and minutes endpoints call both live states processing).',
    },
    upstream_id: stringOrNull('The upstream’s id for the task, once it has one.'),
    request_id: stringOrNull('The gateway’s id of the request that created the task (x-request-id).'),
    error: {
      type: ['object', 'null'],
      description: 'Why the task failed; null otherwise.',
      properties: { code: { type: 'string', description: 'A stable code.' }, message: { type: 'string', description: 'A readable reason.' } },
    },
    created_at: instant('When the task was created.'),
    updated_at: instant('When the task last changed.'),
    finished_at: instantOrNull('When the task reached its final status; null while it runs.'),
    livemode: { type: 'boolean', description: 'False for a test key’s task: run on the sandbox, on the test balance.' },
  },
} as const;

export const ListTasksSchema = {
  tags,
  summary: 'The account’s tasks of every kind, newest first, in pages.',
  querystring: query({
    kind: { type: 'string', enum: ['image', 'video', 'erase', 'minutes'], description: 'Only tasks of this kind.' },
    status: { type: 'string', enum: ['queued', 'processing', 'succeeded', 'failed', 'cancelled'], description: 'Only tasks in this status.' },
    limit: PageLimitParam,
    cursor: CursorParam,
  }),
  response: { 200: page(Task, 'A page of tasks.'), ...errorResponses(400), ...READ_ERRORS },
};

const Delivery = {
  type: 'object',
  required: ['id', 'task_id', 'event_id', 'url', 'state', 'attempts', 'last_status', 'last_error', 'created_at', 'next_attempt_at', 'delivered_at'],
  properties: {
    id: { type: 'string', description: 'The delivery id (whk_…).' },
    task_id: { type: 'string', description: 'The task whose final status is delivered.' },
    event_id: { type: 'string', description: 'The X-Service-Event-Id header: the same on every attempt.' },
    url: { type: 'string', description: 'The task’s callback_url.' },
    state: {
      type: 'string',
      enum: ['pending', 'delivered', 'dropped'],
      description: 'pending while attempts remain; delivered on a 2xx; dropped once every attempt failed.',
    },
    attempts: { type: 'integer', description: 'Attempts made so far (at most 4).' },
    last_status: { type: ['integer', 'null'], description: 'The HTTP status of the last attempt; null if none answered.' },
    last_error: stringOrNull('Why the last attempt failed, when it got no status (a timeout, a refused connection).'),
    created_at: instant('When the task finished and the delivery was queued.'),
    next_attempt_at: instantOrNull('When the next attempt is due; null unless pending.'),
    delivered_at: instantOrNull('When the receiver answered 2xx; null otherwise.'),
  },
} as const;

export const ListDeliveriesSchema = {
  tags,
  summary: 'The account’s webhook deliveries, newest first, in pages.',
  querystring: query({
    task_id: Id('Only deliveries of this task (its id or upstream id); a task of another account is a 404.'),
    limit: PageLimitParam,
    cursor: CursorParam,
  }),
  response: { 200: page(Delivery, 'A page of webhook deliveries.'), ...errorResponses(400, 404), ...READ_ERRORS },
};

export const RedeliverSchema = {
  tags,
  summary: 'Sends a dropped webhook delivery again: same event id, signed afresh with the current secret, with a fresh set of attempts.',
  params: { type: 'object', required: ['id'], properties: { id: Id('The delivery id (whk_…).') } },
  response: {
    200: { ...Delivery, description: 'The delivery, pending again and due now; its attempts and state then change as any delivery’s do.' },
    ...errorResponses(404),
    ...errorResponse(409, 'The delivery was delivered, or is still pending with attempts to come: only a dropped one is redelivered.'),
    ...CHANGE_ERRORS,
  },
};

// ---- webhook secret

export const Secret = {
  type: 'object',
  required: ['secret'],
  properties: { secret: { type: 'string', description: 'The whsec_… secret that signs callbacks (X-Service-Signature).' } },
} as const;

export const WebhookSecretSchema = {
  tags,
  summary: 'The secret that signs the account’s webhook callbacks.',
  response: { 200: { ...Secret, description: 'The current secret.' }, ...READ_ERRORS, ...LIMITED_KEY_ERROR },
};

export const RotateWebhookSecretSchema = {
  tags,
  summary: 'Replaces the webhook secret: every attempt from now on, retries included, is signed with the new one.',
  response: { 200: { ...Secret, description: 'The new secret.' }, ...CHANGE_ERRORS, ...LIMITED_KEY_ERROR },
};

// ---- usage and spend

const UsageFilters = {
  from: DateTimeParam('Only rows written at or after this instant (RFC 3339, e.g. 2024-05-01T00:00:00Z).'),
  to: DateTimeParam('Only rows written before this instant.'),
  model: Id('Only rows of this model.'),
  endpoint: Id('Only rows of this endpoint (chat.completions, messages, …).'),
  key_id: Id('Only rows of calls made with this key of the account; another account’s key is a 404.'),
};

export const Usage = {
  type: 'object',
  required: [
    'id',
    'model',
    'endpoint',
    'units',
    'prices',
    'amount_micros',
    'unbilled_micros',
    'flags',
    'request_id',
    'client_request_id',
    'key_id',
    'hold_id',
    'upstream_ms',
    'channel',
    'attempts',
    'livemode',
    'created_at',
  ],
  properties: {
    id: { type: 'string', description: 'The usage row id (use_…).' },
    model: { type: 'string', description: 'The model called.' },
    endpoint: { type: 'string', description: 'The endpoint called.' },
    units: { type: 'object', additionalProperties: { type: 'number' }, description: 'What was used: unit name to count (input_token, second, …).' },
    prices: {
      type: ['object', 'null'],
      additionalProperties: true,
      description:
        'The price list the units were billed at, taken when the call’s hold was made: unit prices in micros (tokens per million, other units each) and any long-context tiers, as the model’s `price` is configured. Null for rows settled before prices were kept, and for a crash-recovered stream whose prices were not known.',
    },
    amount_micros: micros('What the call was charged.'),
    unbilled_micros: micros('Usage beyond the hold plus overdraft: recorded, never charged.'),
    flags: stringOrNull(
      'Comma-separated notes: clamped (usage figures made sane), clamped:<unit>=<figure> (each figure replaced, as reported), capped (charge capped).',
    ),
    request_id: stringOrNull('The gateway’s id of the request (x-request-id).'),
    client_request_id: stringOrNull('The caller’s own x-request-id, if it sent one.'),
    key_id: stringOrNull('The key the call was made with.'),
    hold_id: stringOrNull('The hold the call was billed through.'),
    upstream_ms: {
      type: ['integer', 'null'],
      description: 'How long the channel took to answer, in ms (for a stream, to its first data): the Server-Timing upstream figure. Null for tasks.',
    },
    channel: stringOrNull('The channel that served the call; null for tasks.'),
    attempts: {
      type: ['integer', 'null'],
      description: 'How many channel and key attempts the call took, the serving one included (1 when the first answered); null for tasks.',
    },
    livemode: { type: 'boolean', description: 'False for a test key’s call (docs/api.md “Test mode”): served by the sandbox, on the test balance.' },
    created_at: instant('When the call was settled.'),
  },
} as const;

export const UsageSchema = {
  tags,
  summary: 'The account’s usage rows newest first, in pages, or every matching row as CSV.',
  querystring: query({
    ...UsageFilters,
    limit: PageLimitParam,
    cursor: CursorParam,
    format: {
      type: 'string',
      enum: ['json', 'csv'],
      description: 'csv: every matching row (limit and cursor do not apply) as a text/csv attachment, units and prices as JSON text.',
    },
  }),
  response: {
    200: {
      description: 'A page of usage rows, or the CSV export.',
      content: {
        'application/json': { schema: page(Usage, 'A page of usage rows.') },
        'text/csv': { schema: { type: 'string', description: 'A header line, then one line per row (RFC 4180 quoting, CRLF).' } },
      },
    },
    ...errorResponses(400, 404),
    ...READ_ERRORS,
  },
};

export const SpendSchema = {
  tags,
  summary: 'Requests and amounts charged, summed per UTC day or per model.',
  querystring: query({
    group_by: { type: 'string', enum: ['day', 'model'], description: 'day (the default): per UTC day; model: per model.' },
    from: UsageFilters.from,
    to: UsageFilters.to,
  }),
  response: {
    200: {
      description: 'One entry per day (ascending) or per model.',
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'array',
          items: {
            type: 'object',
            required: ['requests', 'amount_micros'],
            properties: {
              day: { type: 'string', description: 'The UTC day, YYYY-MM-DD (group_by=day).' },
              model: { type: 'string', description: 'The model (group_by=model).' },
              requests: { type: 'integer', description: 'Billed calls.' },
              amount_micros: micros('What they were charged, in all.'),
            },
          },
        },
      },
    },
    ...errorResponses(400),
    ...READ_ERRORS,
  },
};

export const TestEventSchema = {
  tags,
  summary: 'Sends a signed webhook.test event to a URL, as deliveries are sent, and reports the receiver’s answer.',
  body: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
        minLength: 1,
        maxLength: 2048,
        description: 'The http(s) URL to POST the test event to; the address rules of callback_url apply.',
      },
    },
  },
  response: {
    200: {
      description:
        'The receiver’s answer (status_code, response_ms, body_excerpt), or `error` alone when it could not be reached or its address is refused; 200 either way.',
      type: 'object',
      required: ['event_id'],
      properties: {
        event_id: { type: 'string', description: 'The X-Service-Event-Id sent (evt_…), new for each test event.' },
        status_code: { type: 'integer', description: 'The HTTP status the receiver answered.' },
        response_ms: { type: 'integer', description: 'Milliseconds from sending to the receiver’s whole answer.' },
        body_excerpt: { type: 'string', description: 'The first 300 characters of the receiver’s answer.' },
        signature_header_sent: { type: 'boolean', description: 'True: X-Service-Signature and X-Service-Timestamp were sent, signed with the current secret.' },
        error: { type: 'string', description: 'Why the receiver could not be reached (refused address, timeout, connection refused).' },
      },
    },
    ...errorResponses(400),
    ...CHANGE_ERRORS,
  },
};
