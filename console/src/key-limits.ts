// A key's limits as the Keys page's form holds them (text as typed), and back into the account
// API's body. Amounts go through money.ts's string arithmetic, so "0.3" is exactly 300 000 micros.
import type { KeyLimits } from './api';
import { formatMicros, parseUnits } from './money';

/** The form's fields: what is typed or checked, before it is checked. */
export interface LimitDraft {
  models: string[];
  dailyCap: string;
  monthlyCap: string;
  /** A datetime-local value (`YYYY-MM-DDTHH:MM`), read as UTC like every time the console shows. */
  expires: string;
  rpm: string;
}

export const NO_LIMITS: KeyLimits = { rpm: null, allowed_models: null, daily_cap_micros: null, monthly_cap_micros: null, expires_at: null };

const capText = (micros: number | null) => (micros === null ? '' : formatMicros(micros).replaceAll(',', ''));

/** The form filled with a key's limits, to change them. */
export function draftOf(limits: KeyLimits): LimitDraft {
  return {
    models: limits.allowed_models ?? [],
    dailyCap: capText(limits.daily_cap_micros),
    monthlyCap: capText(limits.monthly_cap_micros),
    expires: limits.expires_at?.slice(0, 16) ?? '',
    rpm: limits.rpm === null ? '' : String(limits.rpm),
  };
}

export type LimitChanges = { body: Partial<KeyLimits> } | { error: string };

/** A field that is not a valid value, in words to show beside the form. */
class Invalid extends Error {}

function capOf(text: string, label: string): number | null {
  if (text.trim() === '') return null;
  const micros = parseUnits(text);
  if (micros === undefined) throw new Invalid(`${label}: enter an amount above zero, like 0.05 (at most six decimals)`);
  return micros;
}

function rpmOf(text: string): number | null {
  if (text.trim() === '') return null;
  const rpm = Number(text);
  if (!Number.isSafeInteger(rpm) || rpm < 1) throw new Invalid('Requests per minute: enter a whole number of at least 1');
  return rpm;
}

const expiryOf = (text: string) => (text === '' ? null : new Date(`${text}:00Z`).toISOString());

const sameModels = (a: string[] | null, b: string[] | null) => JSON.stringify([...(a ?? [])].sort()) === JSON.stringify([...(b ?? [])].sort());

/**
 * Only the limits that differ from `current` (a key's, or none for a new key): a field left as it
 * was is not sent, so it stays as it is; a field cleared is sent as null, which removes the limit.
 * Or the first field that is not a valid value.
 */
export function limitChanges(draft: LimitDraft, current: KeyLimits = NO_LIMITS): LimitChanges {
  try {
    const models = draft.models.length === 0 ? null : draft.models;
    const daily = capOf(draft.dailyCap, 'Daily spend cap');
    const monthly = capOf(draft.monthlyCap, 'Monthly spend cap');
    const rpm = rpmOf(draft.rpm);
    const body: Partial<KeyLimits> = {};
    if (!sameModels(models, current.allowed_models)) body.allowed_models = models;
    if (daily !== current.daily_cap_micros) body.daily_cap_micros = daily;
    if (monthly !== current.monthly_cap_micros) body.monthly_cap_micros = monthly;
    // Compared to the minute the form shows, so an untouched expiry is never sent back.
    if (draft.expires !== (current.expires_at?.slice(0, 16) ?? '')) body.expires_at = expiryOf(draft.expires);
    if (rpm !== current.rpm) body.rpm = rpm;
    return { body };
  } catch (caught) {
    if (caught instanceof Invalid) return { error: caught.message };
    throw caught;
  }
}

/** Whether a key's expiry has passed. */
export const isExpired = (limits: KeyLimits, now = Date.now()) => limits.expires_at !== null && Date.parse(limits.expires_at) <= now;
