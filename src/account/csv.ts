// CSV lines as RFC 4180 writes them: a field holding a comma, a quote, CR or LF is quoted, with its
// quotes doubled; every line ends in CRLF. Objects are written as their JSON text, null as nothing.

export type CsvValue = string | number | boolean | null | undefined | object;

export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvLine = (values: readonly CsvValue[]): string => `${values.map(csvField).join(',')}\r\n`;
