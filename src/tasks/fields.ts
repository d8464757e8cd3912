// Reading fields of a parsed JSON body for the task request normalisers: each reader refuses a
// wrong value with a 400 naming the field, and `null` counts as absent. No coercion, ever.
import { invalidRequest } from '../errors.js';

export type Fields = Record<string, unknown>;

export const MAX_URL_LENGTH = 8192; // signed URLs with session tokens run past 2 kB

export const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
export const given = (fields: Fields, field: string): unknown => (Object.hasOwn(fields, field) ? (fields[field] ?? undefined) : undefined);
export const isOneOf = <T extends string>(value: unknown, allowed: readonly T[]): value is T =>
  typeof value === 'string' && (allowed as readonly string[]).includes(value);
export const oneOf = (allowed: readonly string[]) => `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;

export function isHttpUrl(value: string): boolean {
  if (/\s/.test(value) || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

export function readHttpUrl(body: Fields, field: string): string | undefined {
  const value = given(body, field);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !isHttpUrl(value)) throw invalidRequest(`${field}: must be an http(s) URL`);
  if (value.length > MAX_URL_LENGTH) throw invalidRequest(`${field}: at most ${MAX_URL_LENGTH} characters`);
  const { username, password } = new URL(value);
  if (username !== '' || password !== '') throw invalidRequest(`${field}: must not contain credentials`);
  return value;
}

export function readEnum<T extends string, F extends T | undefined>(body: Fields, field: string, allowed: readonly T[], fallback: F): T | F {
  const value = given(body, field);
  if (value === undefined) return fallback;
  if (!isOneOf(value, allowed)) throw invalidRequest(`${field}: ${oneOf(allowed)}`);
  return value;
}

export function readBoolean(body: Fields, field: string, fallback: boolean): boolean {
  const value = given(body, field);
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalidRequest(`${field}: must be a boolean`);
  return value;
}

export function readInteger(body: Fields, field: string, fallback: number, inRange: (n: number) => boolean, rule: string): number {
  const value = given(body, field);
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || !inRange(value)) throw invalidRequest(`${field}: ${rule}`);
  return value;
}
