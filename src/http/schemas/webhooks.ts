// The callbacks the gateway sends (OpenAPI 3.1 `webhooks`): a task's end, to its callback_url, and
// the account's test event. The headers are those src/webhooks/send.ts signs every POST with; the
// payloads those src/tasks/webhook-payload.ts and src/webhooks/test-event.ts write.
import { WEBHOOK_HEADERS } from '../../webhooks/sign.js';
import { Batch } from './batches.js';

const dateTime = (description: string) => ({ type: 'string', format: 'date-time', description });

const SIGNATURE_HEADERS = [
  {
    in: 'header',
    name: WEBHOOK_HEADERS.signature,
    required: true,
    description:
      '`sha256=` and the hex HMAC-SHA256, keyed with the account’s webhook secret, of `<X-Service-Timestamp>.<raw body>`. `verifyWebhook` of the tollroute package checks it.',
    schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
  },
  {
    in: 'header',
    name: WEBHOOK_HEADERS.timestamp,
    required: true,
    description: 'When the POST was signed, in Unix seconds: refuse one far from now (300 s by default) as a replay.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    in: 'header',
    name: WEBHOOK_HEADERS.eventId,
    required: true,
    description: 'The event’s id, equal to the signed body’s `event_id`: the same on every retry and redelivery, so a receiver deduplicates on it.',
    schema: { type: 'string' },
  },
];

const EventId = { type: 'string', description: 'The event’s id (evt_…), as in X-Service-Event-Id.' };

export const TaskFinishedPayload = {
  type: 'object',
  required: ['task_id', 'event_id', 'task_type', 'status', 'model', 'livemode', 'created_at', 'finished_at'],
  properties: {
    task_id: { type: 'string', description: 'The task’s id; for a video created through an ARK-compatible path, the id that path answered.' },
    event_id: EventId,
    task_type: { type: 'string', enum: ['image', 'video', 'erase_subtitle', 'minutes'] },
    status: { type: 'string', enum: ['succeeded', 'failed'] },
    model: { type: 'string' },
    livemode: { type: 'boolean', description: 'false for a task made with a test key.' },
    result_url: { type: 'string', description: 'Images and minutes: where the task’s result is read (GET, with the key).' },
    video_url: { type: 'string', description: 'A succeeded video or subtitle erase: the video.' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string', enum: ['task_failed'] }, message: { type: 'string', description: 'Why, in the upstream’s words.' } },
      description: 'Set when the task failed; its hold was released, nothing was charged.',
    },
    created_at: dateTime('When the task was created.'),
    finished_at: dateTime('When it ended.'),
  },
} as const;

export const TestEventPayload = {
  type: 'object',
  required: ['type', 'event_id', 'account_id', 'created_at'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['webhook.test'] },
    event_id: EventId,
    account_id: { type: 'string' },
    created_at: dateTime('When it was sent.'),
  },
} as const;

export const BatchEndedPayload = {
  type: 'object',
  required: ['event_id', 'type', 'livemode', 'created_at', 'data'],
  additionalProperties: false,
  properties: {
    event_id: EventId,
    type: { type: 'string', enum: ['batch.completed', 'batch.expired', 'batch.cancelled'] },
    livemode: { type: 'boolean', description: 'false for a batch made with a test key.' },
    created_at: { type: 'integer', description: 'When the batch ended, in Unix seconds.' },
    data: { ...Batch, description: 'The batch as GET /v1/batches/{id} answers it, its output and error files written.' },
  },
} as const;

export const BalanceLowPayload = {
  type: 'object',
  required: ['event_id', 'type', 'livemode', 'created_at', 'data'],
  additionalProperties: false,
  properties: {
    event_id: EventId,
    type: { type: 'string', enum: ['account.balance_low'] },
    livemode: { type: 'boolean', description: 'false for a test twin’s test balance.' },
    created_at: { type: 'integer', description: 'When the crossing was noticed, in Unix seconds.' },
    data: {
      type: 'object',
      required: ['account_id', 'balance_micros', 'held_micros', 'threshold_micros'],
      additionalProperties: false,
      properties: {
        account_id: { type: 'string' },
        balance_micros: { type: 'integer', description: 'Spendable funds when the crossing was noticed.' },
        held_micros: { type: 'integer', description: 'Funds held by calls running then; balance + held is below the threshold.' },
        threshold_micros: { type: 'integer', description: 'The account’s low_balance_micros.' },
      },
    },
  },
} as const;

const callback = (tag: string, summary: string, description: string, operationId: string, payload: object) => ({
  post: {
    operationId,
    summary,
    description,
    tags: [tag],
    parameters: SIGNATURE_HEADERS,
    requestBody: { required: true, content: { 'application/json': { schema: payload } } },
    responses: {
      '2XX': { description: 'Received. Any other answer, or none within `webhooks.timeout_ms`, is a failed attempt.' },
    },
  },
});

export const WEBHOOKS = {
  taskFinished: callback(
    'tasks',
    'A task ended: POSTed to the callback_url it was created with.',
    'Sent once the task succeeded or failed and its charge is settled; retried on the schedule of `webhooks.retry_delays_ms` until the receiver answers 2xx, then dropped (the account can redeliver it).',
    'taskFinishedWebhook',
    TaskFinishedPayload,
  ),
  batchEnded: callback(
    'batches',
    'A batch ended (completed, expired or cancelled): POSTed to the callback_url it was created with.',
    'Sent once every line has ended and the output and error files are written; retried as a task’s is.',
    'batchEndedWebhook',
    BatchEndedPayload,
  ),
  accountBalanceLow: callback(
    'account',
    'The account’s funds fell below its low-balance threshold: POSTed to its webhook_url (PATCH /v1/account/settings).',
    'Sent once per crossing; funds back at or above the threshold (a credit) make the next crossing send again. Retried as a task’s is.',
    'accountBalanceLowWebhook',
    BalanceLowPayload,
  ),
  webhookTest: callback(
    'account',
    'A test event: POSTed by POST /v1/account/webhook-secret/test to the URL it names.',
    'Signed with the account’s current secret, once, never retried: the answer is shown to the caller.',
    'webhookTestWebhook',
    TestEventPayload,
  ),
} as const;
