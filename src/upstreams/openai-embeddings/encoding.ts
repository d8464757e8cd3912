// Embedding vectors as OpenAI writes them: a list of floats, or with `encoding_format: "base64"`
// the base64 of the float32 array in little-endian order (what the openai SDKs ask for and decode).

export function float32Base64(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  for (const [i, value] of values.entries()) bytes.writeFloatLE(value, i * 4);
  return bytes.toString('base64');
}

export function floatsOfBase64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const values: number[] = [];
  for (let at = 0; at + 4 <= bytes.length; at += 4) values.push(bytes.readFloatLE(at));
  return values;
}

/** A vector in the form asked for. */
export const encodedVector = (values: readonly number[], format: 'float' | 'base64' | undefined): number[] | string =>
  format === 'base64' ? float32Base64(values) : [...values];
