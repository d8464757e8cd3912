// The console's one way to reach the gateway: same-origin fetches to the account API, which the
// session cookie authenticates. Errors carry the API's own message ({"error": "…"}) to show as is.

/** A failure as the console shows it: the API's own message (an ApiError's), or the error's. */
export const messageOf = (failure: unknown) => (failure instanceof Error ? failure.message : String(failure));

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Fired when the gateway no longer knows the session (expired, signed out elsewhere, its key revoked). */
export const SIGNED_OUT = 'tollroute:signed-out';
const SESSION = '/v1/account/session';

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return undefined as T;
  const answer = await response.json().catch(() => undefined);
  // A refused sign-in is the sign-in page's to show; any other 401 means the session is over.
  if (response.status === 401 && path !== SESSION) dispatchEvent(new Event(SIGNED_OUT));
  if (!response.ok) throw new ApiError(response.status, typeof answer?.error === 'string' ? answer.error : `the gateway answered ${response.status}`);
  return answer as T;
}

/** A query string of the filters that are set. */
export function query(params: Record<string, string | undefined>): string {
  const set = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '');
  return set.length === 0 ? '' : `?${new URLSearchParams(set).toString()}`;
}

// ---- what the API answers (README "Your account")

export interface Account {
  id: string;
  name: string;
  balance_micros: number;
  held_micros: number;
  overdraft_micros: number;
  created_at: string;
  /** The low-balance threshold; null: none. */
  low_balance_micros: number | null;
  /** The funds (balance + held) are below the threshold now. */
  balance_low: boolean;
}

/** The account's settings (GET and PATCH /v1/account/settings). */
export interface AccountSettings {
  low_balance_micros: number | null;
  webhook_url: string | null;
  balance_low: boolean;
  low_balance_since: string | null;
}

/** A key's limits; null is no limit (for rpm: the gateway's default). */
export interface KeyLimits {
  rpm: number | null;
  allowed_models: string[] | null;
  daily_cap_micros: number | null;
  monthly_cap_micros: number | null;
  expires_at: string | null;
}

export interface ApiKey extends KeyLimits {
  id: string;
  prefix: string;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Spent or held this UTC day and month; null for a key without a spend cap. */
  spend: { day_micros: number; month_micros: number } | null;
}

/** A model the gateway serves (GET /v1/account/models, as /v1/models). */
export interface Model {
  id: string;
  model_type: string;
  /** Its prices under the caller's plan; absent where the gateway gives none. */
  pricing?: ModelPricing;
}

/** A dimension a model is billed in, by OpenRouter's names. */
export type PricingKey =
  | 'prompt'
  | 'completion'
  | 'input_cache_read'
  | 'input_cache_write'
  | 'input_cache_write_1h'
  | 'internal_reasoning'
  | 'input_audio'
  | 'output_audio'
  | 'input_image'
  | 'request'
  | 'web_search'
  | 'image'
  | 'character'
  | 'second';

/** Decimal strings in the balance's unit (1 000 000 micros is 1) per token, request, search, image, character or second. */
export type PricingRates = Partial<Record<PricingKey, string>>;

/** A model's prices, only the dimensions it is billed in; `tiers` are its long-context prices. */
export interface ModelPricing extends PricingRates {
  tiers?: (PricingRates & { above_input_tokens: number })[];
}

export interface UsageRow {
  id: string;
  model: string;
  endpoint: string;
  units: Record<string, number>;
  amount_micros: number;
  request_id: string | null;
  /** How long the channel took to answer, in ms; null for tasks. */
  upstream_ms: number | null;
  created_at: string;
}

export interface Task {
  id: string;
  kind: 'image' | 'video' | 'erase' | 'minutes';
  model: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed' | 'cancelled';
  error: { code: string; message: string } | null;
  created_at: string;
  finished_at: string | null;
}

/** A succeeded image, video or erase task and the media it made (GET /v1/account/gallery). */
export interface GalleryItem {
  id: string;
  kind: 'image' | 'video' | 'erase';
  model: string;
  created_at: string;
  finished_at: string | null;
  media: { type: 'image' | 'video'; url: string; poster_url: string | null }[];
  /** The video an erase task cleaned; null for other kinds. */
  original: { task_id: string; type: 'video'; url: string } | null;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** A credit or debit of the account's ledger (GET /v1/account/topups). */
export interface TopUp {
  id: number;
  kind: string;
  amount_micros: number;
  note: string | null;
  /** What it was: the note, or `operator credit`. */
  description: string;
  created_at: string;
}

/** What redeeming a code answers (POST /v1/account/redemptions). */
export interface Redemption {
  amount_micros: number;
  balance_micros: number;
  batch_id: string;
}

export interface Spend {
  day?: string;
  model?: string;
  requests: number;
  amount_micros: number;
}

export interface WebhookDelivery {
  id: string;
  task_id: string;
  event_id: string;
  url: string;
  state: 'pending' | 'delivered' | 'dropped';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

/** The receiver's answer to a test event, or why it could not be reached. */
/** Whether the gateway takes cards (GET /v1/account/card-payments/options); every other field is null when it does not. */
export interface CardOptions {
  enabled: boolean;
  currency: string | null;
  micros_per_minor_unit: number | null;
  min_amount_micros: number | null;
  max_amount_micros: number | null;
}

/** A Stripe Checkout Session the gateway started (POST /v1/account/checkout-sessions): the browser goes to its url. */
export interface CheckoutSession {
  id: string;
  url: string;
  amount_micros: number;
  amount_minor: number;
  currency: string;
}

export interface TestEventResult {
  event_id: string;
  status_code?: number;
  response_ms?: number;
  body_excerpt?: string;
  signature_header_sent?: boolean;
  error?: string;
}
