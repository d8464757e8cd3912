// Times and usage units as the pages show them.

/** `2024-05-01T12:34:56.789Z` → `2024-05-01 12:34 UTC`; null → `never`. */
export function formatTime(iso: string | null): string {
  return iso === null ? 'never' : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** `{input_tokens: 12, output_tokens: 3}` → `input_tokens 12, output_tokens 3`. */
export function formatUnits(units: Record<string, number>): string {
  return Object.entries(units)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');
}
