// The bytes of a JSON body made invalid on every JSON route (the /v1 POSTs and the admin API):
// invalid UTF-8, nesting past the depth limit, a body past the size limit (with a length or
// chunked), a content type that is not JSON, broken JSON, prototype keys, a body that is not an
// object. Always a 400 (413 for size) in the error shape saying what is wrong, never a charge.
// Below HTTP: framing that is not HTTP (on raw sockets), and callers that leave mid-body.
import fc from 'fast-check';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { adminHeaders, BODY_LIMIT_BYTES, type Expect, jsonHeaders, type Probe, type PropertySpec, probe } from './harness.js';

interface RawRoute {
  name: string;
  path: (accountId: string) => string;
  headers: (key: string) => Record<string, string>;
  /** A valid body; its one 'hello', a whole string value, is where bytes or nesting go. */
  base: Record<string, unknown>;
  /** JSON null is a valid body here (a route whose body is optional). */
  nullable?: boolean;
}

const v1 = (name: string, path: string, base: Record<string, unknown>, extra: Record<string, string> = {}): RawRoute => ({
  name,
  path: () => path,
  headers: (key) => jsonHeaders(key, extra),
  base,
});
const admin = (name: string, path: (id: string) => string, base: Record<string, unknown>, nullable = false): RawRoute => ({
  name,
  path,
  headers: () => adminHeaders({ 'content-type': 'application/json' }),
  base,
  nullable,
});

const ROUTES: RawRoute[] = [
  v1('chat', '/v1/chat/completions', { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }] }),
  v1(
    'messages',
    '/v1/messages',
    { model: 'sandbox-claude', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
    { 'anthropic-version': '2023-06-01' },
  ),
  v1('responses', '/v1/responses', { model: 'sandbox-chat', input: 'hello' }),
  v1('speech/unidirectional', '/v1/audio/speech/unidirectional?model=sandbox-tts', { req_params: { text: 'hello', speaker: 's' } }),
  v1('speech', '/v1/audio/speech', { model: 'sandbox-tts', input: 'hello', voice: 'v' }),
  v1('search', '/v1/search', { Type: 'web', Query: 'hello' }),
  v1('images/async', '/v1/images/async', { model: 'sandbox-image', prompt: 'hello' }),
  v1('videos', '/v1/videos/generations', { model: 'sandbox-video', content: [{ type: 'text', text: 'hello' }] }),
  v1('ark videos', '/api/v3/contents/generations/tasks', { model: 'sandbox-video', content: [{ type: 'text', text: 'hello' }] }),
  v1('erase-subtitle', '/v1/videos/erase-subtitle', { video_task_id: 'hello' }),
  v1('minutes', '/v1/audio/minutes', { model: 'vendor-minutes', file_url: 'http://127.0.0.1:9/a.mp3', all_activate: true, hot_words: 'hello' }),
  // The credit route names the property's own account: a body accepted by mistake shows in its ledger.
  admin('admin credit', (id) => `/admin/accounts/${id}/credit`, { amount_micros: 5, note: 'hello' }),
  admin('admin accounts', () => '/admin/accounts', { name: 'hello' }),
  admin('admin keys', (id) => `/admin/accounts/${id}/keys`, { name: 'hello' }, true),
];

/** Byte sequences that are not UTF-8: stray continuation, overlong, surrogate, past U+10FFFF, cut short, never-valid bytes. */
const NOT_UTF8 = [
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xfe],
  [0xff],
  [0xc3],
];

interface RawMutation {
  kind: string;
  /** The body bytes for a route, for the route's account. */
  bytes: (route: RawRoute) => Buffer | string;
  contentType?: string | null;
  chunked?: boolean;
  lazy?: boolean;
  expect: Expect;
}

const json = (route: RawRoute) => JSON.stringify(route.base);
const splice = (route: RawRoute, at: number, insert: Buffer) => {
  const text = json(route);
  const cut = text.indexOf('hello') + (at % 6);
  return Buffer.concat([Buffer.from(text.slice(0, cut)), insert, Buffer.from(text.slice(cut))]);
};

const invalidUtf8: fc.Arbitrary<RawMutation> = fc
  .tuple(fc.nat(), fc.array(fc.constantFrom(...NOT_UTF8), { minLength: 1, maxLength: 3 }))
  // An ASCII byte after each: a sequence cut short must not be completed by the next one (c3 then 80 is 'À').
  .map(([at, seqs]) => ({
    kind: `invalid UTF-8 ${seqs.map((s) => Buffer.from(s).toString('hex')).join(' ')}`,
    bytes: (r) => splice(r, at, Buffer.from(seqs.flatMap((seq) => [...seq, 0x78]))),
    expect: { names: ['UTF-8'] },
  }));

// At most 8 000 levels: 8 000 × '{"a":' stays under the size limit.
const deep: fc.Arbitrary<RawMutation> = fc
  .tuple(fc.integer({ min: 64, max: 8_000 }), fc.constantFrom('[', '{"a":'), fc.constantFrom('hello', 'x-extra'))
  .map(([depth, open, field]) => ({
    kind: `nested ${depth} deep with ${open} in ${field}`,
    bytes: (r) => {
      const close = open === '[' ? ']' : '}';
      const value = `${open.repeat(depth)}1${close.repeat(depth)}`;
      return field === 'hello' ? json(r).replace('"hello"', value) : json(r).replace(/}$/, `,"x-extra":${value}}`);
    },
    expect: { names: ['nested deeper than 64 levels'] },
  }));

const oversized: fc.Arbitrary<RawMutation> = fc
  .tuple(fc.integer({ min: BODY_LIMIT_BYTES + 1, max: 3 * BODY_LIMIT_BYTES }), fc.boolean(), fc.boolean())
  .map(([size, chunked, inString]) => ({
    kind: `${size} bytes${chunked ? ' chunked' : ''}${inString ? ' in a string' : ' of spaces'}`,
    chunked,
    lazy: true,
    bytes: (r) => {
      const text = json(r);
      return inString
        ? Buffer.from(text.replace('hello', 'h'.repeat(size - text.length + 5)))
        : Buffer.concat([Buffer.from(text), Buffer.alloc(size - text.length, 0x20)]);
    },
    expect: { status: [413], names: ['too large'] },
  }));

const contentTypes: fc.Arbitrary<RawMutation> = fc
  .constantFrom<string | null>(
    null,
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'text/json',
    'application/jsonx',
    'application/json-patch+json',
    'application/octet-stream',
    'multipart/form-data; boundary=x',
    'text/html; charset=utf-8',
    'json',
  )
  .map((contentType) => ({ kind: `Content-Type ${contentType}`, contentType, bytes: json, expect: { names: ['Content-Type'] } }));

const brokenJson: fc.Arbitrary<RawMutation> = fc.oneof(
  fc
    .nat()
    .map((n) => ({ kind: 'cut short', bytes: (r: RawRoute) => json(r).slice(0, 1 + (n % (json(r).length - 1))), expect: { names: ['invalid JSON body'] } })),
  fc
    .constantFrom<[string, (t: string) => string]>(
      ['trailing garbage', (t) => `${t}x`],
      ['two values', (t) => `${t}${t}`],
      ['single quotes', (t) => t.replace(/^{"(\w+)"/, "{'$1'")],
      ['NaN', (t) => t.replace(/}$/, ',"n":NaN}')],
      ['comment', (t) => `/* c */${t}`],
      ['trailing comma', (t) => t.replace(/}$/, ',}')],
      ['unquoted key', (t) => t.replace(/^{"(\w+)"/, '{$1')],
      ['control char', (t) => t.replace('hello', 'he\u0001llo')],
      ['bad escape', (t) => t.replace('hello', 'he\\xllo')],
      ['lone bracket', () => '['],
    )
    .map(([kind, edit]) => ({ kind, bytes: (r: RawRoute) => edit(json(r)), expect: { names: ['invalid JSON body'] } })),
);

const prototypeKeys: fc.Arbitrary<RawMutation> = fc
  .constantFrom('{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}', '{"a":{"__proto__":{}}}')
  .map((extra) => ({
    kind: `prototype ${extra}`,
    bytes: (r: RawRoute) => `${json(r).slice(0, -1)},${extra.slice(1)}`,
    expect: { names: ['invalid JSON body'] },
  }));

const notObject: fc.Arbitrary<RawMutation> = fc
  .oneof(
    fc.constantFrom('[]', '"hello"', '0', 'true', 'null', '1e400', '[{"model":"sandbox-chat"}]'),
    fc
      .jsonValue()
      .filter((v) => typeof v !== 'object' || Array.isArray(v) || v === null)
      .map((v) => JSON.stringify(v)),
  )
  .map((text) => ({ kind: `top-level ${text.slice(0, 30)}`, bytes: () => text, expect: { names: ['body'] } }));

/** HTTP that is not HTTP: chunk sizes, lengths, header names and values, request lines, headers past 16 KB. */
const FRAMINGS: fc.Arbitrary<(body: string) => string> = fc.oneof(
  fc
    .oneof(fc.constantFrom('zz', '-1', '0x1f', '+5', 'g'), fc.stringMatching(/^[g-z]{1,6}$/))
    .map((size) => (b: string) => `Transfer-Encoding: chunked\r\n\r\n${size}\r\n${b}\r\n0\r\n\r\n`),
  fc
    .oneof(fc.constantFrom('abc', '-1', '1e3', '1.5', '0x10', '', '1 2'), fc.stringMatching(/^[a-z]{1,8}$/))
    .map((length) => (b: string) => `Content-Length: ${length}\r\n\r\n${b}`),
  fc.constant((b: string) => `Content-Length: ${b.length}\r\nTransfer-Encoding: chunked\r\n\r\n${b}`),
  fc.nat(50).map((more) => (b: string) => `Content-Length: ${b.length}\r\nContent-Length: ${b.length + 1 + more}\r\n\r\n${b}`),
  fc.constantFrom('Bad Header', 'X(y)', 'a@b', 'x"y', '', 'X-\u00e9').map((name) => (b: string) => `${name}: v\r\nContent-Length: ${b.length}\r\n\r\n${b}`),
  fc
    .integer({ min: 0, max: 31 })
    .filter((c) => c !== 9)
    .map((c) => (b: string) => `X-Ctl: a${String.fromCharCode(c)}b\r\nContent-Length: ${b.length}\r\n\r\n${b}`),
  fc.constantFrom('NoColonHere', ' leading-space: v', 'X-A: a\r\n folded').map((line) => (b: string) => `${line}\r\nContent-Length: ${b.length}\r\n\r\n${b}`),
  fc
    .constantFrom('gzip', 'chunked, chunked', 'identity, chunked', 'foo')
    .map((te) => (b: string) => `Transfer-Encoding: ${te}\r\n\r\n5\r\nhello\r\n0\r\n\r\n${b}`),
  fc.constant((b: string) => `Transfer-Encoding: chunked\r\n\r\n${b.length.toString(16)}\r\n${b}\r\n`),
  fc.integer({ min: 17_000, max: 64_000 }).map((n) => (b: string) => `X-Big: ${'a'.repeat(n)}\r\nContent-Length: ${b.length}\r\n\r\n${b}`),
);
const REQUEST_LINES = fc.oneof(
  fc.constantFrom('POST /v1/chat/completions HTTP/1.1', 'POST /v1/search HTTP/1.1', 'POST /v1/videos/generations HTTP/1.1'),
  fc
    .constantFrom(
      'POST /v1/chat/completions HTTP/9.9',
      'PO ST /v1/chat/completions HTTP/1.1',
      'post /v1/chat/completions HTTP/1.1',
      'POST /v1/chat /completions HTTP/1.1',
      'POST /v1/chat/completions HTTP/1.1 extra',
    )
    .map((line) => ({ broken: line })),
);

function wireProbes(key: string): fc.Arbitrary<Probe> {
  const body = JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }] });
  const head = (line: string) => `${line}\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n`;
  return fc.tuple(REQUEST_LINES, FRAMINGS).map(([line, framing]) => {
    // A broken request line is sent with a well-formed rest; a good one with a broken framing.
    const text = typeof line === 'string' ? head(line) + framing(body) : `${head(line.broken)}Content-Length: ${body.length}\r\n\r\n${body}`;
    const label = `wire ${JSON.stringify(text.slice(typeof line === 'string' ? head(line).length : 0, 80))}`;
    return probe({
      label,
      method: 'POST',
      path: '',
      headers: {},
      wire: Buffer.from(text, 'latin1'),
      expect: { status: [400, 431], names: ['not valid HTTP', 'headers are too large'] },
    });
  });
}

/** A request whose body stops part-way (its Content-Length never met), on JSON and upload routes. */
function leavingProbes(key: string): fc.Arbitrary<Probe> {
  const json = JSON.stringify({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello '.repeat(200) }] });
  const form = `--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nsandbox-ast\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n${'RIFF'.padEnd(2000, 'x')}\r\n--b--\r\n`;
  const routes: [string, string, string][] = [
    ['/v1/chat/completions', 'application/json', json],
    ['/v1/videos/generations', 'application/json', json],
    ['/admin/accounts', 'application/json', json],
    ['/v1/audio/translations', 'multipart/form-data; boundary=b', form],
    ['/v1/files', 'multipart/form-data; boundary=b', form],
  ];
  return fc
    .tuple(fc.constantFrom(...routes), fc.double({ min: 0, max: 0.99, noNaN: true }), fc.constantFrom<'reset' | 'close'>('reset', 'close'))
    .map(([[path, type, body], share, how]) => {
      const cut = Math.floor(body.length * share);
      const auth = path.startsWith('/admin') ? ADMIN_TOKEN : key;
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${auth}\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n`;
      return probe({
        label: `${how} after ${cut} of ${body.length} bytes to ${path}`,
        method: 'POST',
        path,
        headers: {},
        wire: Buffer.from(head + body.slice(0, cut)),
        leaves: how,
        expect: {},
      });
    });
}

function rawProbes(mutations: fc.Arbitrary<RawMutation>, account: { key: string; accountId: string }): fc.Arbitrary<Probe> {
  return fc
    .tuple(fc.constantFrom(...ROUTES), mutations)
    .filter(([route, m]) => !(route.nullable && m.kind === 'top-level null'))
    .map(([route, m]) => {
      const headers = route.headers(account.key);
      if (m.contentType === null) delete headers['content-type'];
      else if (m.contentType !== undefined) headers['content-type'] = m.contentType;
      const build = () => Buffer.from(m.bytes(route));
      return probe({
        label: `${route.name} ${m.kind}`,
        method: 'POST',
        path: route.path(account.accountId),
        headers,
        body: m.lazy ? build : build(),
        chunked: m.chunked,
        expect: m.expect,
      });
    });
}

export const rawBodyProperties: PropertySpec[] = [
  { name: 'HTTP framing that is not HTTP is a 400 (431 for headers past the limit)', probes: ({ key }) => wireProbes(key), numRuns: 20 },
  { name: 'a caller that leaves part-way through its body leaves the gateway healthy', probes: ({ key }) => leavingProbes(key), numRuns: 15 },
  ...(
    [
      ['invalid UTF-8 inside a string', invalidUtf8, 70],
      ['nesting past the depth limit', deep, 50],
      ['a body past the size limit', oversized, 25],
      ['a content type that is not JSON', contentTypes, 50],
      ['broken JSON', brokenJson, 70],
      ['prototype keys', prototypeKeys, 30],
      ['a body that is not an object', notObject, 50],
    ] as const
  ).map(([name, mutations, numRuns]) => ({
    name: `${name}: a 4xx saying what is wrong, on every JSON route`,
    probes: (account: { key: string; accountId: string }) => rawProbes(mutations, account),
    numRuns,
  })),
];
