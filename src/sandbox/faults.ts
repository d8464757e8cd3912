import { openAiError } from './openai-common.js';
import { isRecord } from './text.js';

/** A programmed misbehaviour (DESIGN §8): selectors say which requests, the rest says what happens. */
export interface FaultRule {
  readonly id: string;
  readonly kind?: string;
  /** Matches requests whose path starts with this. */
  readonly path?: string;
  /** Matches requests whose JSON body has this `model`. */
  readonly model?: string;
  readonly status?: number;
  /** The error body sent with `status`: JSON, or a string sent as text/plain; OpenAI's error shape when absent. */
  readonly body?: unknown;
  readonly delay_ms?: number;
  readonly hang?: boolean;
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
  /** A `task_outcome` rule is spent only on requests that create a task, never on their status polls. */
  readonly createsTask?: boolean;
}

type FieldCheck = (value: unknown) => boolean;
const nonNegativeInt: FieldCheck = (v) => Number.isSafeInteger(v) && (v as number) >= 0;
const FIELDS: Record<string, { check: FieldCheck; expected: string }> = {
  kind: { check: (v) => typeof v === 'string', expected: 'a string' },
  path: { check: (v) => typeof v === 'string' && v.startsWith('/'), expected: 'a path starting with /' },
  model: { check: (v) => typeof v === 'string', expected: 'a string' },
  status: { check: (v) => Number.isInteger(v) && (v as number) >= 200 && (v as number) <= 599, expected: 'an HTTP status' },
  body: { check: () => true, expected: 'any JSON' },
  delay_ms: { check: nonNegativeInt, expected: 'a non-negative integer' },
  hang: { check: (v) => typeof v === 'boolean', expected: 'a boolean' },
  drop_after_chunks: { check: nonNegativeInt, expected: 'a non-negative integer' },
  chunk_delay_ms: { check: nonNegativeInt, expected: 'a non-negative integer' },
  task_outcome: { check: (v) => v === 'succeeded' || v === 'failed', expected: '"succeeded" or "failed"' },
  times: { check: (v) => Number.isSafeInteger(v) && (v as number) >= 1, expected: 'a positive integer' },
};

/** Checks a posted rule; unknown fields are refused so a misspelt behaviour does not silently do nothing. */
export function parseFaultRule(input: unknown): Omit<FaultRule, 'id'> | string {
  if (!isRecord(input)) return 'fault rule: expected a JSON object';
  for (const [name, value] of Object.entries(input)) {
    const field = FIELDS[name];
    if (!field) return `${name}: unknown field (known: ${Object.keys(FIELDS).join(', ')})`;
    if (value !== undefined && !field.check(value)) return `${name}: expected ${field.expected}`;
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
  const rule = parseFaultRule(body ?? {});
  if (typeof rule === 'string') return { status: 400, body: controlError(rule) };
  return { status: 200, body: { id: book.add(rule).id } };
}
