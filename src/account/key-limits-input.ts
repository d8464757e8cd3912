// A key's limits as the account API takes them (snake_case JSON, instants as ISO text), checked
// and turned into api_keys columns. The JSON schema has checked the shapes; here are the rules
// that need the gateway's own state: the models it knows, the clock, the gateway's default rpm.
import { invalidRequest } from '../errors.js';
import type { ApiKeysTable } from '../store/schema.js';

export interface KeyLimitsBody {
  rpm?: number | null;
  allowed_models?: string[] | null;
  daily_cap_micros?: number | null;
  monthly_cap_micros?: number | null;
  expires_at?: string | null;
}

export type KeyLimitColumnValues = Partial<Pick<ApiKeysTable, 'rpm'>> & {
  allowed_models?: string | null;
  daily_cap_micros?: number | null;
  monthly_cap_micros?: number | null;
  expires_at?: number | null;
};

export interface KeyLimitRules {
  knownModels: ReadonlySet<string>;
  /** The most rpm the acting caller may give a key: the gateway default, which it runs at itself (a caller with an rpm may not manage keys). */
  maxRpm: number;
  now: number;
}

/** Only the fields given: a field left out stays as it is on an update, and is null on a new key. */
export function keyLimitColumns(body: KeyLimitsBody, { knownModels, maxRpm, now }: KeyLimitRules): KeyLimitColumnValues {
  const columns: KeyLimitColumnValues = {};
  if (body.rpm !== undefined) {
    if (body.rpm !== null && body.rpm > maxRpm) throw invalidRequest(`rpm: at most ${maxRpm}, the gateway's default rate limit`);
    columns.rpm = body.rpm;
  }
  if (body.allowed_models !== undefined) {
    const unknown = body.allowed_models?.filter((model) => !knownModels.has(model)) ?? [];
    if (unknown.length > 0) throw invalidRequest(`allowed_models: unknown model ${unknown.join(', ')}`);
    columns.allowed_models = body.allowed_models === null ? null : JSON.stringify(body.allowed_models);
  }
  if (body.daily_cap_micros !== undefined) columns.daily_cap_micros = body.daily_cap_micros;
  if (body.monthly_cap_micros !== undefined) columns.monthly_cap_micros = body.monthly_cap_micros;
  if (body.expires_at !== undefined) {
    const at = body.expires_at === null ? null : Date.parse(body.expires_at);
    if (at !== null && !(at > now)) throw invalidRequest(`expires_at: ${body.expires_at} is not a time in the future`);
    columns.expires_at = at;
  }
  return columns;
}
