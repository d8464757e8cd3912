// Values that a field of a given kind must refuse, and the mutation of one field of a valid body.
// Every arbitrary here yields something invalid by construction: never a value the rule accepts.
import fc from 'fast-check';

/** A JSON number token JavaScript cannot hold as written (1e400, 20 digits), kept as raw text. */
export class RawNumber {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may contain RawNumber tokens. */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v) => (v instanceof RawNumber ? `\u0000raw${raws.push(v.text) - 1}\u0000` : v));
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)]!);
}

export type Path = readonly (string | number)[];

/** `messages[0].role` for ['messages', 0, 'role']. */
export const showPath = (path: Path) => path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${p}` : p), '');

/** A copy of `body` with the value at `path` replaced, or removed when `value` is `REMOVE`. */
export const REMOVE = Symbol('remove');
export function withField(body: unknown, path: Path, value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = copy;
  for (const step of path.slice(0, -1)) at = at[step] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === REMOVE) delete at[last];
  else at[last] = value;
  return copy;
}

// Numbers no bounded field takes: past 64 bits, past a double, below zero, fractional.
const HUGE = [1e308, -1e308, 2 ** 64, -(2 ** 63), 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 1.5, -1];
const RAW_HUGE = ['1e400', '-1e400', '123456789012345678901234567890', '1E+999'].map((t) => new RawNumber(t));

// Text beyond ASCII from a fixed sample (accents, CJK, emoji and joiners, combining marks, RTL,
// invisibles, NUL): fast-check's full-Unicode units cost a second to set up in each process.
const UNICODE_SAMPLES = ['é', 'ß', '中文', '🎬', '👩‍👩‍👧', 'e\u0301', 'עברית', '\u200b', '\u0000', '\t', '\ufeff', '\u2028', '"', '\\'];
const piece = fc.oneof({ weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) }, { weight: 1, arbitrary: fc.constantFrom(...UNICODE_SAMPLES) });
/** A string of ASCII and sampled non-ASCII text, of `minLength` to `maxLength` pieces. */
export const text = ({ minLength = 0, maxLength }: { minLength?: number; maxLength: number }) =>
  fc.array(piece, { minLength, maxLength }).map((parts) => parts.join(''));

const anyString = text({ maxLength: 20 });
const nested = fc.integer({ min: 1, max: 40 }).map((d) => JSON.parse('['.repeat(d) + ']'.repeat(d)) as unknown);
const smallObject = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.oneof(fc.integer(), anyString), { maxKeys: 3 });

/** Wrong-type pools: each lacks the named JSON type. */
const strings = fc.oneof(anyString, fc.constantFrom('10', 'true', 'null', '1e400', ''));
const numbers = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(...HUGE), fc.constantFrom(...RAW_HUGE));
const booleans = fc.boolean();
const arrays = fc.oneof(fc.array(fc.oneof(fc.integer(), anyString), { maxLength: 3 }), nested);
const objects = smallObject;
const nulls = fc.constant(null);

type JsonType = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'null';
const POOLS: Record<JsonType, fc.Arbitrary<unknown>> = { string: strings, number: numbers, boolean: booleans, array: arrays, object: objects, null: nulls };

/** A value of any JSON type except those listed. */
export function wrongType(...accepted: JsonType[]): fc.Arbitrary<unknown> {
  return fc.oneof(...(Object.keys(POOLS) as JsonType[]).filter((t) => !accepted.includes(t)).map((t) => POOLS[t]));
}

/** An integer field bounded by [min, max] (either may be absent): wrong types, fractions and numbers past the bounds. */
export function badInteger({ min, max, nullable = false }: { min?: number; max?: number; nullable?: boolean }): fc.Arbitrary<unknown> {
  // 1e400 parses to Infinity, which no integer rule takes; the others are finite and only past a bound.
  const outside: fc.Arbitrary<unknown>[] = [fc.constant(new RawNumber('1e400'))];
  if (min !== undefined)
    outside.push(
      fc.nat(2 ** 30).map((k) => min - 1 - k),
      fc.constantFrom(...HUGE.filter((n) => n < min)),
      fc.constant(new RawNumber('-1e400')),
    );
  if (max !== undefined)
    outside.push(
      fc.nat(2 ** 30).map((k) => max + 1 + k),
      fc.constantFrom(...HUGE.filter((n) => n > max)),
      fc.constantFrom(...RAW_HUGE),
    );
  const low = min ?? -1000;
  const fraction = fc.integer({ min: low, max: Math.min(max ?? low + 1000, low + 1000) }).map((n) => n + 0.5);
  return fc.oneof(wrongType('number', ...(nullable ? ['null' as const] : [])), fraction, ...outside);
}

/** A number field bounded by [min, max]: wrong types and numbers past the bounds. */
export function badNumber({ min, max, nullable = false }: { min: number; max: number; nullable?: boolean }): fc.Arbitrary<unknown> {
  return fc.oneof(
    wrongType('number', ...(nullable ? ['null' as const] : [])),
    fc.double({ min: max, max: 1e308, minExcluded: true, noNaN: true, noDefaultInfinity: true }),
    fc.double({ min: -1e308, max: min, maxExcluded: true, noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(...RAW_HUGE),
  );
}

/** A string field: wrong types, and '' when it must not be empty. */
export const badString = ({ nonEmpty = true, nullable = false }: { nonEmpty?: boolean; nullable?: boolean } = {}) =>
  fc.oneof(wrongType('string', ...(nullable ? ['null' as const] : [])), ...(nonEmpty ? [fc.constant('')] : []));

/** An enum field: other strings (case changes, near misses, anything) and wrong types. */
export function badEnum(allowed: readonly string[], { nullable = false }: { nullable?: boolean } = {}): fc.Arbitrary<unknown> {
  const near = fc.constantFrom(...allowed).chain((v) => fc.constantFrom(v.toUpperCase(), ` ${v}`, `${v} `, `${v}x`, v.slice(1)));
  return fc.oneof(near, anyString, wrongType('string', ...(nullable ? ['null' as const] : []))).filter((v) => !allowed.includes(v as string));
}

export const badBoolean = ({ nullable = false }: { nullable?: boolean } = {}) =>
  fc.oneof(fc.constantFrom('true', 'false', 0, 1, 'yes'), wrongType('boolean', ...(nullable ? ['null' as const] : [])));

/** A field name no schema declares. */
export const unknownField = (known: readonly string[]) =>
  fc
    .oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('frames', 'draft', 'Model', 'modle', 'tools ', 'x-y'))
    .filter((k) => !known.includes(k) && k !== '__proto__' && k !== 'constructor');

/** A model id the catalogue does not hold. */
export const unknownModel = fc.oneof(
  text({ minLength: 1, maxLength: 30 }).map((s) => `no-such-${s}`),
  fc.constantFrom('sandbox-chat ', 'SANDBOX-CHAT', 'sandbox', 'gpt-4o'),
);

/** Every model of the sandbox catalogue by type, for "a model of another type". */
export const MODELS_BY_TYPE: Record<string, readonly string[]> = {
  chat: ['sandbox-chat', 'sandbox-chat-noresponses', 'sandbox-claude'],
  tts: ['sandbox-tts'],
  search: ['vendor-web-search', 'vendor-global-search'],
  minutes: ['vendor-minutes', 'service-minutes'],
  video: ['sandbox-video'],
  image: ['sandbox-image'],
  ast: ['sandbox-ast'],
  erase: ['sandbox-erase'],
};
export const modelOfAnotherType = (type: string) =>
  fc.constantFrom(
    ...Object.entries(MODELS_BY_TYPE)
      .filter(([t]) => t !== type)
      .flatMap(([, ids]) => ids),
  );

/** One mutated field: the value (or REMOVE) and what the refusal must name. */
export interface FieldMutation {
  path: Path;
  value: unknown;
  names: readonly string[];
  exact?: readonly string[];
}

/** A mutation of `path` to a value from `bad`, named by its path (and its last segment). */
export const mutate = (path: Path, bad: fc.Arbitrary<unknown>, names: readonly string[] = [showPath(path)]): fc.Arbitrary<FieldMutation> =>
  bad.map((value) => ({ path, value, names }));

/** A required field removed: "<path> field is required". */
export const removeField = (path: Path): fc.Arbitrary<FieldMutation> => fc.constant({ path, value: REMOVE, names: [`${showPath(path)} field is required`] });

/** The body's model missing, empty, of a wrong type, unknown, or a model of another type. */
export function modelMutations(type: string, path: Path = ['model'], { nullIsMissing = false } = {}): fc.Arbitrary<FieldMutation> {
  const required = { exact: ['model field is required'], names: [] as string[] };
  return fc.oneof(
    fc.constant({ path, value: REMOVE, ...required }),
    fc.constant({ path, value: '', ...required }),
    ...(nullIsMissing ? [fc.constant({ path, value: null, ...required })] : []),
    wrongType('string', ...(nullIsMissing ? ['null' as const] : [])).map((value) => ({ path, value, names: ['model'], exact: required.exact })),
    unknownModel.map((value) => ({ path, value, names: [value.includes('\u0000') ? 'must not contain the NUL character' : `unknown model: ${value}`] })),
    modelOfAnotherType(type).map((value) => ({ path, value, names: [`model ${value} is not`, 'model:'] })),
  );
}
