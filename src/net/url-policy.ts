// Which user-supplied URLs (`callback_url`, `file_url`) the gateway will send a request to.
// An allow-list: an IPv4 address must be ipaddr.js's `unicast` (public) and an IPv6 address
// global unicast (2000::/3) outside every special range; everything else, including any range
// added to the IANA registries later, is refused until someone decides otherwise.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A URL or address the policy refuses; the message says which and why, never a secret. */
export class RefusedUrlError extends Error {
  override name = 'RefusedUrlError';
}

export interface UrlPolicyOptions {
  /** The field named in messages, e.g. `callback_url`. */
  field?: string;
  /** Operator's `network.allow_private_urls`: skip the address checks (scheme and credentials still apply). */
  allowPrivate?: boolean;
}

const V4_METADATA = ipaddr.parse('169.254.169.254');
const V6_METADATA = ipaddr.parse('fd00:ec2::254');
const V6_GLOBAL_UNICAST: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];
// RFC 6052 well-known NAT64 prefix: the last 32 bits are an IPv4 address the translator will reach.
const V6_NAT64_WELL_KNOWN: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96];

const V4_NAMES: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
};
const V6_NAMES: Record<string, string> = {
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique-local',
  teredo: 'Teredo',
  rfc6052: 'NAT64 local-use',
  reserved: 'reserved',
  discard: 'discard-only',
  deprecatedSiteLocal: 'site-local',
};

/**
 * Why an IP address may not be the target of a user-supplied URL (`loopback`, `metadata`, …),
 * or undefined when it may. Accepts canonical literals as `dns.lookup` and `socket.remoteAddress`
 * give them (IPv6 with or without brackets or a zone id); anything else is refused.
 */
export function refusedAddressReason(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const withoutZone = bare.split('%')[0] ?? '';
  const family = isIP(withoutZone);
  if (family === 4) return refusedV4(ipaddr.IPv4.parse(withoutZone));
  // Through WHATWG URL first: ipaddr.js reads `::127.0.0.1` as `::ffff:127.0.0.1`, a different address.
  if (family === 6) return refusedV6(ipaddr.IPv6.parse(new URL(`http://[${withoutZone}]/`).hostname.slice(1, -1)));
  return 'not an IP address';
}

function refusedV4(ip: ipaddr.IPv4): string | undefined {
  if (ip.match(V4_METADATA, 32)) return 'metadata';
  const range = ip.range();
  return range === 'unicast' ? undefined : (V4_NAMES[range] ?? range);
}

function refusedV6(ip: ipaddr.IPv6): string | undefined {
  if (ip.match(V6_METADATA, 128)) return 'metadata';
  // Forms that carry an IPv4 address the packet ends up at: judge that address.
  if (ip.isIPv4MappedAddress()) return refusedEmbedded(ip.toIPv4Address(), 'IPv4-mapped');
  const range = ip.range();
  if (range === 'rfc6145' || ip.match(V6_NAT64_WELL_KNOWN)) return refusedEmbedded(lastV4(ip), range === 'rfc6145' ? 'IPv4-translated' : 'NAT64');
  if (range === '6to4') {
    const [, high = 0, low = 0] = ip.parts;
    return refusedEmbedded(new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]), '6to4');
  }
  if (range !== 'unicast') return V6_NAMES[range] ?? range;
  // ipaddr.js calls whatever matches no special range `unicast`, including ::/96 (IPv4-compatible)
  // and unassigned space; only 2000::/3 is handed out as global unicast.
  return ip.match(V6_GLOBAL_UNICAST) ? undefined : 'reserved';
}

function lastV4(ip: ipaddr.IPv6): ipaddr.IPv4 {
  const high = ip.parts[6] ?? 0;
  const low = ip.parts[7] ?? 0;
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function refusedEmbedded(v4: ipaddr.IPv4, form: string): string | undefined {
  const reason = refusedV4(v4);
  return reason && `${reason} (${form} ${v4.toString()})`;
}

/** The URL's host as an IP literal (brackets removed), or undefined when it is a name. */
export function ipLiteralHost(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}

// RFC 6761: `localhost` and every name under it resolve to loopback, whatever DNS says.
function isLocalhostName(hostname: string): boolean {
  const name = hostname.replace(/\.$/, '').toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The checks that need no DNS, for request validation: a message naming the field and the
 * problem (`callback_url: must be an http(s) URL`), or undefined when the URL passes. Numeric
 * IPv4 forms (`http://2130706433/`, `http://0x7f.1/`) are already dotted quads once WHATWG URL
 * has parsed them, so they are judged as the address they name. A name is judged again, after
 * resolution, by safeRequest.
 */
export function checkUrlSyntax(url: string, { field = 'url', allowPrivate = false }: UrlPolicyOptions = {}): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${field}: must be an http(s) URL`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `${field}: must be an http(s) URL`;
  if (parsed.username || parsed.password) return `${field}: must not contain credentials`;
  if (allowPrivate) return undefined;
  const literal = ipLiteralHost(parsed);
  const reason = literal ? refusedAddressReason(literal) : isLocalhostName(parsed.hostname) ? 'loopback' : undefined;
  return reason && `${field}: refused address ${parsed.hostname} (${reason})`;
}

// Scheme and authority, then the path as it was written (before any decoding or resolution).
const RAW_PATH = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/;

/**
 * Parses a user-supplied URL the way every later check sees it, refusing the path forms that
 * servers read differently: a backslash (a separator to WHATWG URL, a character to others), an
 * encoded dot segment (`%2e%2e`) or an encoded separator (`%2f`, `%5c`), and whitespace or control
 * characters (which WHATWG URL silently drops). Literal dot segments are resolved, so
 * `/files/../metrics` is judged as the `/metrics` it names. The URL, or a message naming the field.
 */
export function parseUserUrl(raw: string, field = 'url'): { url: URL } | { problem: string } {
  if (/[\u0000-\u0020\u007f]/.test(raw)) return { problem: `${field}: must not contain spaces or control characters` };
  if (raw.includes('\\')) return { problem: `${field}: must not contain a backslash` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: `${field}: must be an http(s) URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `${field}: must be an http(s) URL` };
  if (url.username || url.password) return { problem: `${field}: must not contain credentials` };
  const rawPath = RAW_PATH.exec(raw)?.[1] ?? '';
  if (/%(2f|5c)/i.test(rawPath)) return { problem: `${field}: must not contain an encoded / or \\ in its path` };
  for (const segment of rawPath.split('/')) {
    const decoded = segment.replace(/%2e/gi, '.');
    if (decoded !== segment && (decoded === '.' || decoded === '..')) return { problem: `${field}: must not contain an encoded dot segment (${segment})` };
  }
  return { url };
}

/** How long a creation waits on DNS for a name it checks early. */
const EARLY_LOOKUP_MS = 2_000;

/**
 * checkUrlSyntax, then — for a host name — its DNS answers, every one of which must be allowed.
 * Used where the gateway never connects itself (a file_url the upstream fetches) and, early, for
 * callback_url. A name that does not resolve now (or not within EARLY_LOOKUP_MS) passes: a DNS
 * failure may be passing, and the address is judged again where it is used (safe-request.ts).
 * An IP literal is judged at once, by checkUrlSyntax.
 */
export async function checkUrlTarget(
  url: string,
  options: UrlPolicyOptions & { lookup?: (hostname: string) => Promise<{ address: string }[]>; lookupTimeoutMs?: number } = {},
): Promise<string | undefined> {
  const problem = checkUrlSyntax(url, options);
  if (problem || options.allowPrivate) return problem;
  const parsed = new URL(url);
  if (ipLiteralHost(parsed)) return undefined;
  const field = options.field ?? 'url';
  const lookup = options.lookup ?? ((host) => dnsLookup(host, { all: true, verbatim: true }));
  const answers = await withinMs(
    lookup(parsed.hostname).catch(() => []),
    options.lookupTimeoutMs ?? EARLY_LOOKUP_MS,
  );
  for (const { address } of answers ?? []) {
    const reason = refusedAddressReason(address);
    if (reason) return `${field}: refused address ${parsed.hostname} resolves to ${address} (${reason})`;
  }
  return undefined;
}

/** The promise's value, or undefined once `ms` have passed without one. */
async function withinMs<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
