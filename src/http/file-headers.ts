// Headers an upload is served with. The gateway's own origin serves whatever a caller uploaded,
// so nothing may run there: always a download (attachment), never sniffed, never a type a browser
// renders as a page (HTML, SVG, XML, JavaScript…), and a sandboxing CSP should it be opened anyway.

// Media the upstreams take, and plain documents; everything else is served as bytes.
const SAFE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain']);
const SAFE_FAMILIES = /^(audio|video)\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** The type to serve: the upload's own when it is on the allowlist (without parameters), else bytes. */
export function servedContentType(uploaded: string | null): string {
  const essence = (uploaded ?? '').split(';')[0]!.trim().toLowerCase();
  if (essence === 'text/plain') return 'text/plain; charset=utf-8';
  return SAFE_TYPES.has(essence) || SAFE_FAMILIES.test(essence) ? essence : 'application/octet-stream';
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// RFC 5987 attr-char: what may stay unescaped in filename*.
const encodeRfc5987 = (text: string) => encodeURIComponent(text).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * `attachment` with the upload's name: a plain ASCII fallback (no quote, backslash or control
 * character can end or break it) and the exact name as UTF-8 in filename* (RFC 6266).
 */
export function attachmentDisposition(filename: string): string {
  // Whole code points (a lone surrogate cannot be percent-encoded), controls dropped.
  const wellFormed = filename.replace(LONE_SURROGATE, '\ufffd').replace(/[\u0000-\u001f\u007f]/g, '');
  const name = [...wellFormed].slice(0, 255).join('') || 'file';
  const fallback = name.replace(/[^\u0020-\u007e]|["\\%;]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc5987(name)}`;
}

export const FILE_SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
} as const;
