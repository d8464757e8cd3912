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
