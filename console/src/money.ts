// Amounts arrive as integer micros (1 unit = 1 000 000 micros). They are turned into text with
// integer arithmetic only (BigInt), so no amount is ever shown with a float's rounding drift.

const MICROS_PER_UNIT = 1_000_000n;

/** `12_500_000` → `"12.50"`, `123` → `"0.000123"`, `-1_000_000` → `"-1.00"`: at least two decimals, at most six. */
export function formatMicros(micros: number | bigint): string {
  const value = BigInt(micros);
  const sign = value < 0n ? '-' : '';
  const magnitude = value < 0n ? -value : value;
  const whole = magnitude / MICROS_PER_UNIT;
  const fraction = (magnitude % MICROS_PER_UNIT)
    .toString()
    .padStart(6, '0')
    .replace(/0{1,4}$/, '');
  return `${sign}${whole.toLocaleString('en-US')}.${fraction.padEnd(2, '0')}`;
}

/** The exact sum of integer micros. */
export function sumMicros(amounts: Iterable<number>): bigint {
  let total = 0n;
  for (const amount of amounts) total += BigInt(amount);
  return total;
}

/**
 * What an operator types (`"12.5"`, `"1,000.000001"`) as integer micros, by string arithmetic: no
 * float ever holds the amount, so `"0.3"` is exactly 300 000. Undefined unless it is a positive
 * amount with at most six decimals and within what JSON numbers carry exactly.
 */
export function parseUnits(text: string): number | undefined {
  const match = /^(\d+)(?:\.(\d{0,6}))?$/.exec(text.trim().replaceAll(',', ''));
  if (!match) return undefined;
  const micros = BigInt(match[1]!) * MICROS_PER_UNIT + BigInt((match[2] ?? '').padEnd(6, '0'));
  return micros > 0n && micros <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(micros) : undefined;
}
