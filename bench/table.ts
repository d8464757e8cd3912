// Tables for the terminal and for Markdown, from the same header and rows, and the number formats
// both use.

export const fixed = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits);
export const signed = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || Number.isNaN(value) ? 'n/a' : `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
export const ratio = (value: number | null | undefined) => (value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(2)}×`);
export const megabytes = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? 'n/a' : (bytes / 1024 / 1024).toFixed(0));
export const count = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en') : 'n/a');

/** Columns padded to their widest cell: the first `leftAligned` left-aligned (names), the others right-aligned (figures). */
export function textTable(header: string[], rows: string[][], leftAligned = 1): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i < leftAligned ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable(header: string[], rows: string[][], leftAligned = 1): string {
  const line = (cells: string[]) => `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  const rule = `|${header.map((_, i) => (i < leftAligned ? '---' : '---:')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}
