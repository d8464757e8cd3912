// The shape of tollroute.yaml. Every option is documented in tollroute.example.yaml.
import { z } from 'zod';
import { DEFAULT_TOKENIZER, TOKENIZERS } from '../billing/tokens.js';
import { RedemptionConfigSchema } from './redemption-schema.js';
import { StripeConfigSchema } from './stripe-schema.js';

const positiveInt = z.number().int().positive();
const micros = z.number().int().nonnegative();

export const CHANNEL_KINDS = ['openai', 'anthropic', 'gemini', 'bedrock', 'azure', 'speech', 'search', 'ark', 'minutes', 'erase', 'ast'] as const;
export const MODEL_TYPES = [
  'chat',
  'embedding',
  'transcription',
  'moderation',
  'rerank',
  'search',
  'minutes',
  'video',
  'erase',
  'image',
  'tts',
  'ast',
] as const;
// Token prices are per million tokens (so cheap models stay integers); every other unit is per unit.
// The token units are disjoint: `input_token` is fresh text input, beside the cached reads, cache
// writes, audio and image input; `output_token` is text output, beside reasoning and audio output.
// A unit the model does not price apart is billed at the price it falls back to (billing/prices.ts).
export const TOKEN_UNITS = [
  'input_token',
  'cached_input_token',
  'cache_write_token',
  'cache_write_1h_token',
  'audio_input_token',
  'image_input_token',
  'output_token',
  'reasoning_token',
  'audio_output_token',
] as const;
// `call` is a fee per request (every model type), `web_search` per web search the upstream ran.
export const PRICE_UNITS = [...TOKEN_UNITS, 'call', 'web_search', 'character', 'second', 'image'] as const;

/** Which channel kinds can serve a model of each type. */
export const KINDS_FOR_TYPE: Record<(typeof MODEL_TYPES)[number], readonly (typeof CHANNEL_KINDS)[number][]> = {
  chat: ['openai', 'anthropic', 'gemini', 'bedrock', 'azure'],
  embedding: ['openai', 'azure', 'gemini'],
  transcription: ['openai', 'azure'],
  moderation: ['openai'],
  // Cohere's and Jina's /v1/rerank, which vLLM, Jina and most OpenAI-compatible hosts serve too.
  rerank: ['openai'],
  search: ['search'],
  minutes: ['minutes'],
  video: ['ark'],
  erase: ['erase'],
  image: ['openai'],
  tts: ['speech'],
  ast: ['ast'],
};

export const ChannelSchema = z
  .object({
    kind: z.enum(CHANNEL_KINDS),
    base_url: z.string().url(),
    api_key: z.string().min(1).optional(),
    // Several keys of one upstream account or several accounts: used in turn, and a key the
    // upstream refuses (401/403) or rate-limits (429) is skipped for the next one.
    api_keys: z.array(z.string().min(1)).min(1).optional(),
    // Volcengine-style upstreams authenticate with an app id and a resource id as well.
    app_id: z.string().optional(),
    resource_id: z.string().optional(),
    // bedrock: the AWS region, and credentials (each defaults to its AWS_* environment variable).
    region: z.string().min(1).optional(),
    access_key_id: z.string().min(1).optional(),
    secret_access_key: z.string().min(1).optional(),
    session_token: z.string().min(1).optional(),
    // gemini through Vertex AI: the project and region, and the service account whose OAuth
    // tokens the calls carry (the key file's path, or its JSON text); without it, an API key.
    vertex: z
      .object({
        project: z.string().min(1),
        region: z.string().min(1),
        service_account_file: z.string().min(1).optional(),
        service_account_json: z.string().min(1).optional(),
      })
      .strict()
      .refine((vertex) => (vertex.service_account_file === undefined) !== (vertex.service_account_json === undefined), {
        message: 'give service_account_file or service_account_json (one of them)',
      })
      .optional(),
    // azure: with an api_version, the deployment paths (the deployment is the model's upstream_model);
    // without, Azure's v1 path, which takes OpenAI's bodies with their model field.
    api_version: z.string().min(1).optional(),
    // Calls on the wire at once: a stream holds its connection for its whole length, so this is the
    // channel's concurrency (the reasons for the default are in tollroute.example.yaml).
    connections: positiveInt.default(4096),
    // Past `connections`, how long a call may wait for a free one before it fails unsent (502, released).
    connection_wait_ms: positiveInt.default(5_000),
    timeouts: z
      .object({
        connect_ms: positiveInt.default(10_000),
        headers_ms: positiveInt.default(60_000),
        body_ms: positiveInt.default(300_000),
      })
      .strict()
      .default({}),
  })
  .strict();

const unitPrices = Object.fromEntries(PRICE_UNITS.map((unit) => [unit, micros.optional()])) as Record<
  (typeof PRICE_UNITS)[number],
  z.ZodOptional<typeof micros>
>;

// A long-context tier: past `above_input_tokens` of prompt (every input-side unit together), the
// prices it gives replace the model's (Gemini's and Anthropic's long-context prices).
const PriceTierSchema = z.object({ above_input_tokens: positiveInt, ...unitPrices }).strict();

export const PriceSchema = z
  .object({ ...unitPrices, tiers: z.array(PriceTierSchema).optional() })
  .strict()
  .superRefine((price, ctx) => {
    const thresholds = (price.tiers ?? []).map((tier) => tier.above_input_tokens);
    thresholds.forEach((threshold, i) => {
      if (i > 0 && threshold <= thresholds[i - 1]!)
        ctx.addIssue({ code: 'custom', path: ['tiers', i, 'above_input_tokens'], message: 'tiers must be listed by rising above_input_tokens' });
    });
  });

/** One channel a model is served by: lower `priority` first, `weight` shares traffic within a priority. */
const ModelRouteSchema = z
  .object({
    channel: z.string().min(1),
    upstream_model: z.string().min(1).optional(),
    priority: z.number().int().nonnegative().default(0),
    weight: positiveInt.default(1),
  })
  .strict();

const ModelSchema = z
  .object({
    type: z.enum(MODEL_TYPES),
    // Either one `channel` (with the model's `upstream_model`), or a list of `channels`.
    channel: z.string().min(1).optional(),
    channels: z.array(ModelRouteSchema).optional(),
    upstream_model: z.string().min(1).optional(),
    price: PriceSchema.default({}),
    // The most output one call may ask for (a larger max_tokens is a 400), and the output cap
    // held for when a request names none.
    max_output_tokens: positiveInt.default(4096),
    // The most input one call can carry: an upstream usage figure beyond it is clamped.
    context_window: positiveInt.default(1_048_576),
    // How the gateway counts prompts itself (holds; streams the caller left without usage).
    tokenizer: z.enum(TOKENIZERS).default(DEFAULT_TOKENIZER),
    // Input tokens an image part of a prompt is held for.
    image_input_tokens: positiveInt.default(1_600),
    // Batches: the percentage off the model's prices for a call run as a line of a batch.
    batch_discount: z.number().int().min(0).max(100).default(0),
    // Images answered at once: a price per image by size ("1024x1024") or size and quality
    // ("1024x1024/hd"), in place of `price.image` for the images it names.
    image_prices: z.record(z.string().regex(/^\d+x\d+(\/[a-z]+)?$/, 'expected "<width>x<height>" or "<width>x<height>/<quality>"'), micros).optional(),
    // A fixed hold amount, overriding the estimate.
    hold_micros: micros.optional(),
    // service-minutes: the chat model that writes the summary and chapters.
    summary_model: z.string().optional(),
    // Search models: which edition of the search product the model calls.
    search_edition: z.enum(['web', 'global']).default('web'),
    // Video models: the longest video they make, held for when a request leaves the length to the model (-1).
    max_video_seconds: positiveInt.default(15),
    owned_by: z.string().default('tollroute'),
    created: z.number().int().nonnegative().default(1_767_225_600),
  })
  .strict();

export const ConfigSchema = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    admin_token: z.string().min(16).optional(),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    data_dir: z.string().default('./data'),
    store: z
      .string()
      .regex(/^(sqlite:|postgres(ql)?:\/\/)/, 'expected sqlite:<path> or a postgres:// URL')
      .optional(),
    sandbox: z
      .object({ enabled: z.boolean().default(false), port: z.number().int().min(0).max(65535).default(8081), task_ms: positiveInt.default(1500) })
      .strict()
      .default({}),
    // Test keys (tr-test-…) are served by a sandbox alone: the embedded one when sandbox.enabled,
    // else the one at sandbox_url; with neither, their calls are refused (503).
    test_mode: z.object({ sandbox_url: z.string().url().optional() }).strict().default({}),
    limits: z
      .object({
        default_rpm: positiveInt.default(600),
        redis: z
          .string()
          .regex(/^rediss?:\/\//, 'expected a redis:// URL')
          .optional(),
        // The longest a take waits for Redis; past it this instance decides alone until a probe,
        // every redis_probe_ms, finds Redis answering again.
        redis_timeout_ms: positiveInt.default(200),
        redis_probe_ms: positiveInt.default(1_000),
        // Failed authentications one client address (an IPv6 /64) may make per minute; past it its
        // unknown keys get 429 (valid ones still pass). 0 turns the limit off (a proxy hiding addresses).
        auth_failures_per_minute: z.number().int().nonnegative().default(30),
        // How long an unknown or revoked key is refused from memory, without a store lookup.
        invalid_key_cache_ms: positiveInt.default(30_000),
        body_limit_bytes: positiveInt.default(10 * 1024 * 1024),
        upload_limit_bytes: positiveInt.default(100 * 1024 * 1024),
        // The longest one call may run, streams included: past it the upstream call is stopped and
        // billed on what was delivered.
        request_timeout_ms: positiveInt.default(600_000),
        shutdown_grace_ms: positiveInt.default(10_000),
        // How long a client may take to send its request headers, and its whole request (uploads
        // included); past either the connection is closed (408).
        headers_timeout_ms: positiveInt.default(10_000),
        receive_timeout_ms: positiveInt.default(120_000),
        // How long a JSON body may take to arrive (408 past it); uploads have receive_timeout_ms.
        body_timeout_ms: positiveInt.default(30_000),
      })
      .strict()
      .default({}),
    network: z
      .object({ allow_private_urls: z.boolean().default(false) })
      .strict()
      .default({}),
    // Browser applications calling /v1/… directly: the origins allowed (none: CORS off).
    cors: z
      .object({
        origins: z.array(z.string().regex(/^(\*|https?:\/\/[^/\s]+)$/, 'expected an origin such as https://app.example.com (no path), or *')).default([]),
      })
      .strict()
      .default({}),
    // /metrics: behind the admin token or its own bearer token unless `public`, and/or on its own
    // port (then not on the gateway's).
    metrics: z
      .object({ token: z.string().min(16).optional(), port: z.number().int().min(0).max(65535).optional(), public: z.boolean().default(false) })
      .strict()
      .default({}),
    // Uploads (POST /v1/files) and the result files upstreams name; see tollroute.example.yaml.
    files: z
      .object({
        max_file_bytes: positiveInt.default(100 * 1024 * 1024),
        max_bytes_per_account: positiveInt.default(1024 * 1024 * 1024),
        ttl_ms: positiveInt.default(7 * 24 * 60 * 60 * 1000),
        sweep_ms: positiveInt.default(60_000),
        upload_min_balance_micros: micros.default(1),
        result_file_max_bytes: positiveInt.default(32 * 1024 * 1024),
      })
      .strict()
      .default({}),
    // Batches (docs/batches.md): lines of one account running at once, over all its batches and
    // instances; and how often an idle instance looks for batch work.
    batches: z
      .object({ lines_per_account: positiveInt.default(4), tick_ms: positiveInt.default(250) })
      .strict()
      .default({}),
    // Crash recovery (DESIGN §3): instances heartbeat; the open holds of one silent for
    // dead_after_ms are ended by any instance's sweep, from the progress streams recorded.
    recovery: z
      .object({
        heartbeat_ms: positiveInt.default(5_000),
        dead_after_ms: positiveInt.default(20_000),
        sweep_ms: positiveInt.default(10_000),
        // How often streams write what they delivered so far (one batched transaction for all).
        progress_interval_ms: positiveInt.default(1_000),
        // First retry of a settle the store refused; doubles up to 30 s, retried until it lands.
        settle_retry_ms: positiveInt.default(500),
      })
      .strict()
      .default({}),
    // Low-balance notices (billing/low-balance.ts): how often each instance looks for accounts
    // whose funds crossed below their threshold, and for those back above it.
    low_balance: z
      .object({ sweep_ms: positiveInt.default(5_000) })
      .strict()
      .default({}),
    // The address callers (and upstreams fetching uploaded files) reach this gateway at.
    public_url: z.string().url().optional(),
    // The account console's sign-in: how long a one-time link may wait to be used, and how long a
    // session lasts (the cookie's Max-Age and the row's expiry).
    console: z
      .object({
        login_link_ttl_ms: positiveInt.default(15 * 60 * 1000),
        session_ttl_ms: positiveInt.default(12 * 60 * 60 * 1000),
      })
      .strict()
      .default({}),
    tasks: z
      .object({
        poll_interval_ms: z
          .object({
            image: positiveInt.default(1_000),
            video: positiveInt.default(5_000),
            erase: positiveInt.default(15_000),
            minutes: positiveInt.default(30_000),
          })
          .strict()
          .default({}),
        tick_ms: positiveInt.default(500),
        lease_ms: positiveInt.default(120_000),
        submit_lease_ms: positiveInt.default(120_000),
        timeout_ms: positiveInt.default(6 * 60 * 60 * 1000),
        // Paid upstream work that may have been done even when no answer came back (an image
        // generation) is tried at most this often per task, then the task fails and is refunded.
        max_generation_attempts: positiveInt.default(3),
      })
      .strict()
      .default({}),
    webhooks: z
      .object({
        retry_delays_ms: z.array(positiveInt).default([5_000, 30_000, 300_000]),
        timeout_ms: positiveInt.default(10_000),
        // attempts in flight per account and receiver (callback URL origin), and in all: hanging callbacks use only their own slots
        per_receiver_concurrency: positiveInt.default(4),
        max_in_flight: positiveInt.default(64),
        // how often the outbox is read for new callbacks: their first attempt starts within about this
        poll_interval_ms: positiveInt.default(250),
      })
      .strict()
      .default({}),
    // Over a model's channels (routing/): how many (channel, key) attempts one call may make, and a
    // seed for the weighted choice (tests; unset, each process draws at random). Then each
    // channel's and key's circuit breaker (routing/breaker.ts): consecutive failures that take it
    // out, its first cool-down (doubled on each failed probe up to the max), and how long a 429
    // without Retry-After rests its key.
    routing: z
      .object({
        // false: failing channels and keys are counted and shown but never taken out (every call is
        // tried on its plan); the operator's disable still works.
        circuit_breaker: z.boolean().default(true),
        max_attempts: positiveInt.default(3),
        seed: z.number().int().optional(),
        failures_to_open: positiveInt.default(5),
        cooldown_ms: positiveInt.default(5_000),
        max_cooldown_ms: positiveInt.default(300_000),
        rate_limit_rest_ms: positiveInt.default(1_000),
      })
      .strict()
      .refine((routing) => routing.max_cooldown_ms >= routing.cooldown_ms, {
        message: 'max_cooldown_ms must be at least cooldown_ms',
        path: ['max_cooldown_ms'],
      })
      .default({}),
    // Price plans and price changes (docs/prices.md) live in the store; each instance looks for a
    // change this often, so a plan or a price change reaches every instance within it.
    prices: z
      .object({ refresh_ms: positiveInt.default(1_000) })
      .strict()
      .default({}),
    // Top-ups by the account holder: redemption codes (docs/topups.md) and cards through Stripe Checkout.
    redemption: RedemptionConfigSchema,
    stripe: StripeConfigSchema,
    channels: z.record(z.string(), ChannelSchema).default({}),
    models: z.record(z.string(), ModelSchema).default({}),
  })
  .strict()
  .superRefine((config, ctx) => {
    for (const [name, channel] of Object.entries(config.channels)) {
      if (channel.api_key !== undefined && channel.api_keys !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['channels', name, 'api_keys'], message: 'give api_key or api_keys, not both' });
      }
      checkChannelKind(channel, ['channels', name], ctx);
    }
    for (const [id, model] of Object.entries(config.models)) checkModelChannels(config.channels, id, model, ctx);
  });

/** What each new upstream kind needs to be called at all, named at load rather than at the first call. */
function checkChannelKind(channel: ChannelConfig, path: string[], ctx: z.RefinementCtx): void {
  const missing = (field: string, why: string) => ctx.addIssue({ code: 'custom', path: [...path, field], message: `a ${channel.kind} channel needs ${why}` });
  if (channel.kind === 'bedrock' && channel.region === undefined) missing('region', 'its AWS region');
  if (channel.kind !== 'gemini' && channel.vertex !== undefined)
    ctx.addIssue({ code: 'custom', path: [...path, 'vertex'], message: 'vertex is for channels of kind gemini' });
  if (channel.kind === 'gemini' && channel.vertex !== undefined && (channel.api_key ?? channel.api_keys) !== undefined) {
    ctx.addIssue({ code: 'custom', path: [...path, 'vertex'], message: 'give vertex or an api_key, not both' });
  }
}

function checkModelChannels(channels: Record<string, ChannelConfig>, id: string, model: ModelConfig, ctx: z.RefinementCtx): void {
  if (model.channel !== undefined && model.channels !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['models', id, 'channels'], message: 'give channel or channels, not both' });
    return;
  }
  if (model.channel === undefined && model.channels === undefined) {
    ctx.addIssue({ code: 'custom', path: ['models', id, 'channel'], message: 'a model needs a channel (or a list of channels)' });
    return;
  }
  if (model.channels?.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['models', id, 'channels'], message: 'the list of channels is empty' });
    return;
  }
  const routes = model.channels ?? [{ channel: model.channel! }];
  routes.forEach((route, i) => {
    const path = model.channels ? ['models', id, 'channels', i, 'channel'] : ['models', id, 'channel'];
    const channel = channels[route.channel];
    if (!channel) ctx.addIssue({ code: 'custom', path, message: `no channel named "${route.channel}"` });
    else if (!KINDS_FOR_TYPE[model.type].includes(channel.kind)) {
      ctx.addIssue({ code: 'custom', path, message: `channel "${route.channel}" is of kind ${channel.kind}, which cannot serve a ${model.type} model` });
    }
  });
}

/** The channels a model is served by, the single `channel:` form included. */
export function modelRoutes(model: ModelConfig): { channel: string; upstreamModel: string | undefined; priority: number; weight: number }[] {
  if (model.channels)
    return model.channels.map((r) => ({ channel: r.channel, upstreamModel: r.upstream_model ?? model.upstream_model, priority: r.priority, weight: r.weight }));
  return [{ channel: model.channel!, upstreamModel: model.upstream_model, priority: 0, weight: 1 }];
}

/** The channel's upstream keys, in turn order; none when it needs no key. */
export const channelKeys = (channel: ChannelConfig): string[] => channel.api_keys ?? (channel.api_key ? [channel.api_key] : []);

export type ConfigInput = z.input<typeof ConfigSchema>;
export type Config = z.output<typeof ConfigSchema> & { store: string; admin_token: string; public_url: string };
export type ChannelConfig = z.output<typeof ChannelSchema>;
export type ModelConfig = z.output<typeof ModelSchema>;
export type ModelType = (typeof MODEL_TYPES)[number];
export type PriceUnit = (typeof PRICE_UNITS)[number];
export type Price = z.output<typeof PriceSchema>;
export type PriceTier = z.output<typeof PriceTierSchema>;
