// The JSON text of a value with every object's fields in sorted order, at any depth: two bodies
// that differ only in the order of their fields give the same text, so Idempotency-Key sees one
// request. Arrays keep their order (it means something). One pass, one string: no copy of the
// value is built, and fields are compared as JSON.stringify would write them (undefined left out).
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === 'function') return write(json.call(value));
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${write(value[i]) ?? 'null'}`;
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const name of Object.keys(record).sort()) {
    const field = write(record[name]);
    if (field === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(name)}:${field}`;
    first = false;
  }
  return `${out}}`;
}
