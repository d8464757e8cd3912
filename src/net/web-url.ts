// Media URLs an upstream names reach the account's gallery and asset library, where a browser
// follows them: only http(s) ones do. A `javascript:`, `data:` or `file:` URL from an upstream
// (compromised, or just odd) is never shown as a link.

/** True for a string that parses as an absolute http: or https: URL. */
export function isWebUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value === '') return false;
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
