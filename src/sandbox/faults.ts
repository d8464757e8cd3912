import { validateHeaderName, validateHeaderValue } from 'node:http';
import { openAiError } from './openai-common.js';
import { isRecord } from './text.js';

/**
 * A programmed misbehaviour (DESIGN §8): selectors say which requests, the rest says what happens. Every
 * behaviour applies to every kind; where a kind has no stream, the stream behaviours say what they do to
 * its one answer. Order: `delay_ms`, then `hang` or `reset`, then `status` or the protocol's own answer.
 */
export interface FaultRule {
  readonly id: string;
  readonly kind?: string;
  /** Matches requests whose path starts with this (a task's poll path: `/api/v1/tasks/`, `…/tasks/cgt-`). */
  readonly path?: string;
  /** Matches requests whose JSON body has this `model`. */
  readonly model?: string;
  /** Matches requests that carry this key (`Authorization: Bearer`, `x-api-key`, `x-api-access-key`, `api-key` or `x-goog-api-key`): one key of a channel. */
  readonly api_key?: string;
  readonly status?: number;
  /** The error body sent with `status`: JSON, or a string sent as text/plain; OpenAI's error shape when absent. */
  readonly body?: unknown;
  /** Extra response headers on whatever answer is sent (`retry-after` on a 429; AST: on the 101 or the refusal). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly delay_ms?: number;
  /** The request is read and never answered. */
  readonly hang?: boolean;
  /** The request is read, then the connection is reset (TCP RST): not one byte of an answer. */
  readonly reset?: boolean;
  /**
   * The answer's body is broken, its status kept: a JSON answer is cut to its first half (an empty one becomes
   * `{`); a stream's first chunk is cut the same way inside its framing and the stream then ends cleanly,
   * without its end marker; an AST session's first frame is sent one byte short and the socket closed.
   */
  readonly malformed?: boolean;
  /**
   * A stream sends this many chunks, then its protocol's error (chat `data: {"error"}`, responses `error` and
   * `response.failed`, messages `error`, speech code 55000000, AST SessionFailed) and ends without its end
   * marker; fewer when the stream is shorter. Ignored by answers that are not streams.
   */
  readonly error_after_chunks?: number;
  /**
   * A stream sends this many chunks, then the connection is cut (fewer when the stream is shorter: the end
   * marker never goes out); an answer that is not a stream is cut unsent.
   */
  readonly drop_after_chunks?: number;
  readonly chunk_delay_ms?: number;
  readonly task_outcome?: 'succeeded' | 'failed';
  /** Requests left before the rule expires; absent: until cleared. */
  times?: number;
}

export interface FaultSubject {
  readonly kind: string | null;
  readonly path: string;
  readonly model: unknown;
  /** The key the request carried, if any. */
  readonly apiKey?: string;
  /** A `task_outcome` rule is spent only on requests that create a task, never on their status polls. */
  readonly createsTask?: boolean;
}

type FieldCheck = (value: unknown) => boolean;
const nonNegativeInt: FieldCheck = (v) => Number.isSafeInteger(v) && (v as number) >= 0;
const boolean: FieldCheck = (v) => typeof v === 'boolean';
/** The sandbox frames each body itself: a rule may not lie about its length or its encoding. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'upgrade']);
const FIELDS: Record<string, { check: FieldCheck; expected: string }> = {
  kind: { check: (v) => typeof v === 'string', expected: 'a string' },
  path: { check: (v) => typeof v === 'string' && v.startsWith('/'), expected: 'a path starting with /' },
  model: { check: (v) => typeof v === 'string', expected: 'a string' },
  api_key: { check: (v) => typeof v === 'string' && v !== '', expected: 'a non-empty string' },
  status: { check: (v) => Number.isInteger(v) && (v as number) >= 200 && (v as number) <= 599, expected: 'an HTTP status' },
  body: { check: () => true, expected: 'any JSON' },
  headers: { check: isHeaderMap, expected: 'an object of header names to string values, framing headers excepted' },
  delay_ms: { check: nonNegativeInt, expected: 'a non-negative integer' },
  hang: { check: boolean, expected: 'a boolean' },
  reset: { check: boolean, expected: 'a boolean' },
  malformed: { check: boolean, expected: 'a boolean' },
  error_after_chunks: { check: nonNegativeInt, expected: 'a non-negative integer' },
  drop_after_chunks: { check: nonNegativeInt, expected: 'a non-negative integer' },
  chunk_delay_ms: { check: nonNegativeInt, expected: 'a non-negative integer' },
  task_outcome: { check: (v) => v === 'succeeded' || v === 'failed', expected: '"succeeded" or "failed"' },
  times: { check: (v) => Number.isSafeInteger(v) && (v as number) >= 1, expected: 'a positive integer' },
};

/** Checked here, not when the answer is written: a bad header would otherwise throw inside a handler. */
function isHeaderMap(value: unknown): boolean {
  if (!isRecord(value)) return false;
  try {
    for (const [name, text] of Object.entries(value)) {
      if (typeof text !== 'string' || FRAMING_HEADERS.has(name.toLowerCase())) return false;
      validateHeaderName(name);
      validateHeaderValue(name, text);
    }
  } catch {
    return false;
  }
  return true;
}

/** The fields that make a rule do something; the others only select requests or count them. */
const BEHAVIOURS = [
  'status',
  'headers',
  'delay_ms',
  'hang',
  'reset',
  'malformed',
  'error_after_chunks',
  'drop_after_chunks',
  'chunk_delay_ms',
  'task_outcome',
] as const;

/** Why a posted rule is refused, and the field to blame (null: the rule as a whole). */
export interface FaultRuleError {
  readonly message: string;
  readonly param: string | null;
}

/**
 * Checks a posted rule. A rule the sandbox would ignore is refused rather than stored: an unknown
 * (misspelt) field, a mistyped one, a `body` without the `status` it goes with, or no behaviour.
 */
export function parseFaultRule(input: unknown): Omit<FaultRule, 'id'> | FaultRuleError {
  if (!isRecord(input)) return { message: 'fault rule: expected a JSON object', param: null };
  for (const [name, value] of Object.entries(input)) {
    const field = FIELDS[name];
    if (!field) return { message: `${name}: unknown field (known: ${Object.keys(FIELDS).join(', ')})`, param: name };
    if (value !== undefined && !field.check(value)) return { message: `${name}: expected ${field.expected}`, param: name };
  }
  if (input.body !== undefined && input.status === undefined) return { message: 'body: is sent only with a status; give status too', param: 'body' };
  if (!BEHAVIOURS.some((name) => input[name] !== undefined)) {
    return { message: `fault rule: does nothing; give at least one of ${BEHAVIOURS.join(', ')}`, param: null };
  }
  return input as Omit<FaultRule, 'id'>;
}

export class FaultBook {
  private rules: FaultRule[] = [];
  private nextId = 1;

  add(rule: Omit<FaultRule, 'id'>): FaultRule {
    const stored: FaultRule = { id: `fault_${this.nextId++}`, ...rule };
    this.rules.push(stored);
    return stored;
  }

  clear(): number {
    const count = this.rules.length;
    this.rules = [];
    return count;
  }

  list(): readonly FaultRule[] {
    return this.rules;
  }

  /** The oldest rule whose selectors all match, spending one of its `times`. */
  take(subject: FaultSubject): FaultRule | undefined {
    const index = this.rules.findIndex((rule) => matches(rule, subject));
    const rule = this.rules[index];
    if (!rule) return undefined;
    if (rule.times !== undefined) {
      rule.times -= 1;
      if (rule.times <= 0) this.rules.splice(index, 1);
    }
    return rule;
  }
}

function matches(rule: FaultRule, subject: FaultSubject): boolean {
  return (
    (rule.kind === undefined || rule.kind === subject.kind) &&
    (rule.path === undefined || subject.path.startsWith(rule.path)) &&
    (rule.model === undefined || rule.model === subject.model) &&
    (rule.api_key === undefined || rule.api_key === subject.apiKey) &&
    (rule.task_outcome === undefined || subject.createsTask === true)
  );
}

export interface ControlAnswer {
  readonly status: number;
  readonly body: unknown;
}

const controlError = (message: string) => openAiError(message, 'invalid_request_error');

/** `/__sandbox/faults`: POST adds a rule (answers its id), GET lists them, DELETE clears them all. */
export function answerFaultsControl(book: FaultBook, method: string, body: unknown): ControlAnswer {
  if (method === 'GET') return { status: 200, body: { data: book.list() } };
  if (method === 'DELETE') return { status: 200, body: { deleted: book.clear() } };
  if (method !== 'POST') return { status: 405, body: controlError(`${method} /__sandbox/faults: use GET, POST or DELETE`) };
  if (body === undefined) return { status: 400, body: controlError('fault rule: expected a JSON body (content-type: application/json)') };
  const rule = parseFaultRule(body);
  if ('message' in rule) return { status: 400, body: { error: { ...controlError(rule.message).error, param: rule.param } } };
  return { status: 200, body: { id: book.add(rule).id } };
}
