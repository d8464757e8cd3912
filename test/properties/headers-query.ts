// Headers, query strings and path ids made invalid on every route: a key presented wrongly, the
// messages version, the speech model's query and header, Idempotency-Key on a stream, list
// filters and limits, unknown task ids, and the admin API's bodies. Never a 5xx, never a charge.
import fc from 'fast-check';
import { fieldProbes, type JsonEndpoint } from './endpoint.js';
import { adminHeaders, jsonHeaders, type Probe, type PropertySpec, probe } from './harness.js';
import { badInteger, badString, MODELS_BY_TYPE, modelOfAnotherType, mutate, removeField, text, unknownField, unknownModel, wrongType } from './values.js';

const CHAT = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] };
const SPEECH = { req_params: { text: 'hello', speaker: 's' } };
const ARK = ['/api/v3', '/v3', '/api/v1', '/v1'].map((prefix) => `${prefix}/contents/generations/tasks`);
/** Every /v1 route, with a body it would accept: only the credential is wrong. */
const V1_ROUTES: [Probe['method'], string, unknown?][] = [
  ['POST', '/v1/chat/completions', CHAT],
  ['POST', '/v1/messages', { ...CHAT, max_tokens: 8 }],
  ['POST', '/v1/responses', { model: 'sandbox-chat', input: 'hi' }],
  ['POST', '/v1/audio/speech/unidirectional?model=sandbox-tts', SPEECH],
  ['POST', '/v1/audio/speech', { model: 'sandbox-tts', input: 'hi', voice: 'v' }],
  ['POST', '/v1/search', { Type: 'web', Query: 'q' }],
  ['POST', '/v1/images/async', { model: 'sandbox-image', prompt: 'p' }],
  ...['/v1/videos/generations', ...ARK].map((path): [Probe['method'], string, unknown] => [
    'POST',
    path,
    { model: 'sandbox-video', content: [{ type: 'text', text: 't' }] },
  ]),
  ['POST', '/v1/videos/erase-subtitle', { video_task_id: 't' }],
  ['POST', '/v1/audio/minutes', { model: 'vendor-minutes', file_url: 'http://127.0.0.1:9/a.mp3', all_activate: true }],
  ['POST', '/v1/audio/translations', {}],
  ['POST', '/v1/files', {}],
  ['GET', '/v1/models'],
  ['GET', '/v1/models/sandbox-chat'],
  ['GET', '/v1/assets'],
  ['GET', '/v1/images/async/t'],
  ['GET', '/v1/videos/generations/t'],
  ['GET', `${ARK[0]}/t`],
  ['DELETE', `${ARK[1]}/t`],
  ['GET', '/v1/audio/minutes/t'],
  ['GET', '/v1/videos/erase-subtitle/t'],
];

const printable = (max: number) => fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: max });

/** Credentials that are not the key: absent, malformed, another scheme, the key altered. */
const badCredential = (key: string): fc.Arbitrary<Record<string, string>> =>
  fc
    .oneof<fc.Arbitrary<Record<string, string>>[]>(
      fc.constant({}),
      fc
        .constantFrom(
          'Bearer',
          'Bearer ',
          `Bearer ${key} extra`,
          `Bearer:${key}`,
          `Basic ${Buffer.from(`u:${key}`).toString('base64')}`,
          `Token ${key}`,
          key,
          `Bearer ${key.slice(0, -1)}`,
          `Bearer ${key}x`,
          `Bearer ${key.slice(3)}`,
          `Bearer ${key.toUpperCase()}`,
          `Bearer tr-`,
          `Bearer "${key}"`,
        )
        .map((authorization) => ({ authorization })),
      printable(60).map((s) => ({ authorization: `Bearer tr-${s}` })),
      fc.constantFrom(key.slice(0, -1), `${key} `.replace(' ', 'x'), `Bearer ${key}`, key.slice(3), '').map((apiKey) => ({ 'x-api-key': apiKey })),
      printable(40).map((s) => ({ authorization: `Bearer sk-${s}`, 'x-api-key': `tr-${s}` })),
    )
    .filter((h) => h.authorization !== `Bearer ${key}` && h['x-api-key'] !== key);

const credentials = (key: string) =>
  fc.tuple(fc.constantFrom(...V1_ROUTES), badCredential(key)).map(([[method, path, body], headers]) =>
    probe({
      label: `credential ${JSON.stringify(headers)}`,
      method,
      path,
      expect: { status: [401], exact: ['invalid or missing API key'] },
      headers: { ...(body !== undefined && { 'content-type': 'application/json' }), 'anthropic-version': '2023-06-01', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

const adminCredentials = (key: string, accountId: string) =>
  fc
    .tuple(
      fc.constantFrom<[Probe['method'], string]>(
        ['GET', `/admin/accounts/${accountId}`],
        ['GET', `/admin/accounts/${accountId}/ledger`],
        ['POST', `/admin/accounts/${accountId}/credit`],
        ['DELETE', '/admin/keys/k'],
        ['GET', `/admin/accounts/${accountId}/webhook-secret`],
      ),
      fc.oneof(
        fc.constant(undefined),
        fc.constantFrom(`Bearer ${key}`, 'Bearer adm-test-token', 'adm-test-token-0123456789abcdef', 'Bearer adm-test-token-0123456789abcdeF'),
        printable(50).map((s) => `Bearer ${s}`),
      ),
    )
    .map(([[method, path], authorization]) =>
      probe({
        label: `admin credential ${authorization}`,
        method,
        path,
        expect: { status: [401], exact: ['invalid or missing admin token'] },
        headers: { ...(authorization !== undefined && { authorization }), ...(method === 'POST' && { 'content-type': 'application/json' }) },
        body: method === 'POST' ? JSON.stringify({ amount_micros: 1_000_000 }) : undefined,
      }),
    );

const badVersion = fc.oneof(
  fc.constant({}),
  printable(30)
    .filter((v) => v !== '2023-06-01')
    .map((v) => ({ 'anthropic-version': v })),
  fc.constantFrom('2023-01-01', '2024-10-22', '2023-06-1', '2023/06/01', '2023-06-01, 2023-06-01').map((v) => ({ 'anthropic-version': v })),
  printable(30)
    .filter((v) => v !== '2023-06-01')
    .map((v) => ({ 'vendor-version': v, 'anthropic-version': '2023-06-01' })),
);
const versions = (key: string) =>
  fc.tuple(fc.constantFrom('sandbox-chat', 'sandbox-claude'), fc.boolean(), badVersion).map(([model, stream, headers]) =>
    probe({
      label: `version ${JSON.stringify(headers)}`,
      method: 'POST',
      path: '/v1/messages',
      headers: jsonHeaders(key, headers),
      body: JSON.stringify({ ...CHAT, model, max_tokens: 8, stream }),
      expect: { names: ['anthropic-version'] },
    }),
  );

/** The speech model from neither place, an empty query and no header, an unknown or wrong model, the query given twice. */
const speechModel = (key: string) =>
  fc
    .oneof(
      fc.constantFrom({ query: '', header: undefined }, { query: '?model=', header: undefined }, { query: '?model=', header: '' }),
      fc
        .tuple(fc.oneof(unknownModel, modelOfAnotherType('tts')), fc.boolean())
        .map(([model, inQuery]) => (inQuery ? { query: `?model=${encodeURIComponent(model)}`, header: 'sandbox-tts' } : { query: '', header: model })),
      fc.constant({ query: '?model=sandbox-tts&model=sandbox-tts', header: undefined }),
    )
    .filter(({ header }) => header === undefined || /^[\x21-\x7e]*$/.test(header))
    .map(({ query, header }) =>
      probe({
        label: `speech model ${query} ${header}`,
        method: 'POST',
        path: `/v1/audio/speech/unidirectional${query}`,
        body: JSON.stringify(SPEECH),
        headers: jsonHeaders(key, header === undefined ? {} : { 'x-api-resource-id': header }),
        expect: { names: ['model'] },
      }),
    );

const STREAMED: [string, unknown][] = [
  ['/v1/chat/completions', { ...CHAT, stream: true }],
  ['/v1/messages', { ...CHAT, max_tokens: 8, stream: true }],
  ['/v1/responses', { model: 'sandbox-chat', input: 'hi', stream: true }],
  ['/v1/audio/speech/unidirectional?model=sandbox-tts', SPEECH],
  ['/v1/audio/speech', { model: 'sandbox-tts', input: 'hi', voice: 'v' }],
];
/** Calls answered in one piece: a valid body, so only the key is wrong (the ledger shows a call that ran). */
const ONE_PIECE: [string, unknown][] = [
  ['/v1/chat/completions', CHAT],
  ['/v1/messages', { ...CHAT, max_tokens: 8 }],
  ['/v1/responses', { model: 'sandbox-chat', input: 'hi' }],
  ['/v1/search', { Type: 'web', Query: 'q' }],
  ['/v1/images/async', { model: 'sandbox-image', prompt: 'p' }],
  ['/v1/videos/generations', { model: 'sandbox-video', content: [{ type: 'text', text: 't' }] }],
];
/** Idempotency-Key on a streamed call (never replayable), or empty or past 255 characters on any call. */
const idempotencyKeys = (key: string) =>
  fc
    .oneof(
      fc.tuple(fc.constantFrom(...STREAMED), printable(64)),
      fc.tuple(
        fc.constantFrom(...ONE_PIECE),
        fc.oneof(
          fc.constant(''),
          fc.integer({ min: 256, max: 2000 }).map((n) => 'k'.repeat(n)),
        ),
      ),
    )
    .map(([[path, body], idempotencyKey]) =>
      probe({
        label: `Idempotency-Key of ${idempotencyKey.length} on ${path}`,
        method: 'POST',
        path,
        body: JSON.stringify(body),
        headers: jsonHeaders(key, { 'anthropic-version': '2023-06-01', 'idempotency-key': idempotencyKey }),
        expect: { names: ['Idempotency-Key'] },
      }),
    );

const badLimit = fc.oneof(
  fc.constantFrom('0', '-1', '1001', '10000', 'abc', '1.5', '01', '1e3', '', '%201', '0x10'),
  printable(8)
    .filter((s) => !/^(?:[1-9][0-9]{0,2}|1000)$/.test(s))
    .map(encodeURIComponent),
);
const badFilter = (allowed: string[]) =>
  fc
    .oneof(fc.constantFrom('', 'IMAGE', 'images', 'all'), printable(12))
    .filter((v) => !allowed.includes(v))
    .map(encodeURIComponent);
const queries = (key: string, accountId: string) =>
  fc
    .oneof(
      badFilter(['chat', 'search', 'minutes', 'video', 'erase', 'image', 'tts', 'ast']).map((v) => ({
        path: `/v1/models?type=${v}`,
        names: ['type'],
        admin: false,
      })),
      fc.constant({ path: '/v1/models?type=chat&type=tts', names: ['type'], admin: false }),
      badFilter(['image', 'video']).map((v) => ({ path: `/v1/assets?kind=${v}`, names: ['kind'], admin: false })),
      badLimit.map((v) => ({ path: `/v1/assets?limit=${v}`, names: ['limit'], admin: false })),
      fc
        .tuple(fc.constantFrom('ledger', 'usage'), badLimit)
        .map(([list, v]) => ({ path: `/admin/accounts/${accountId}/${list}?limit=${v}`, names: ['limit'], admin: true })),
    )
    .map(({ path, names, admin }) =>
      probe({ label: `query ${path}`, method: 'GET', path, headers: admin ? adminHeaders() : jsonHeaders(key), expect: { names } }),
    );

const TASK_READS: [Probe['method'], string][] = [
  ['GET', '/v1/images/async/'],
  ['GET', '/v1/videos/generations/'],
  ...ARK.flatMap((p): [Probe['method'], string][] => [
    ['GET', `${p}/`],
    ['DELETE', `${p}/`],
  ]),
  ['GET', '/v1/audio/minutes/'],
  ['GET', '/v1/videos/erase-subtitle/'],
  ['GET', '/v1/models/'],
];
const unknownIds = (key: string) =>
  fc
    .tuple(
      fc.constantFrom(...TASK_READS),
      fc.oneof(text({ minLength: 1, maxLength: 40 }), fc.constantFrom('..', '%', 'task_00000000000000000000000000000000', ' ')),
    )
    .filter(([, id]) => !Object.values(MODELS_BY_TYPE).flat().includes(id))
    .map(([[method, prefix], id]) =>
      probe({
        label: `unknown id ${id}`,
        method,
        path: `${prefix}${encodeURIComponent(id)}`,
        headers: { authorization: `Bearer ${key}` },
        // A NUL is refused before any lookup (PostgreSQL cannot hold it): a 400 naming it.
        expect: id.includes('\u0000')
          ? { status: [400], names: ['must not contain the NUL character'] }
          : { status: [404], names: ['not found', 'no model named', 'no route for'] },
      }),
    );

const MICROS = { min: 0, max: Number.MAX_SAFE_INTEGER };
const adminBodies = (accountId: string): JsonEndpoint[] => [
  {
    name: 'admin accounts',
    paths: ['/admin/accounts'],
    headers: adminHeaders(),
    bases: [{ name: 'acme' }, { name: 'acme', credit_micros: 5, overdraft_micros: 0 }],
    mutations: fc.oneof(
      removeField(['name']),
      mutate(
        ['name'],
        fc.oneof(
          badString(),
          fc.integer({ min: 201, max: 400 }).map((n) => 'n'.repeat(n)),
        ),
      ),
      mutate(['credit_micros'], badInteger(MICROS)),
      mutate(['overdraft_micros'], badInteger(MICROS)),
      unknownField(['name', 'credit_micros', 'overdraft_micros']).map((f) => ({ path: [f], value: 1, names: [`${f}: unknown field`] })),
    ),
  },
  {
    // The property's own account: a credit accepted by mistake shows in its ledger.
    name: 'admin credit',
    paths: [`/admin/accounts/${accountId}/credit`],
    headers: adminHeaders(),
    bases: [{ amount_micros: 5 }, { amount_micros: 7, note: 'n' }],
    mutations: fc.oneof(
      removeField(['amount_micros']),
      mutate(['amount_micros'], badInteger({ min: 1, max: Number.MAX_SAFE_INTEGER })),
      mutate(
        ['note'],
        fc.oneof(
          wrongType('string'),
          fc.integer({ min: 501, max: 900 }).map((n) => 'n'.repeat(n)),
        ),
      ),
      unknownField(['amount_micros', 'note']).map((f) => ({ path: [f], value: 1, names: [`${f}: unknown field`] })),
    ),
  },
  {
    name: 'admin keys',
    paths: [`/admin/accounts/${accountId}/keys`],
    headers: adminHeaders(),
    bases: [{ name: 'k' }, { rpm: 5 }],
    mutations: fc.oneof(
      mutate(
        ['name'],
        fc.oneof(
          wrongType('string'),
          fc.integer({ min: 201, max: 400 }).map((n) => 'n'.repeat(n)),
        ),
      ),
      mutate(['rpm'], badInteger({ min: 1 })),
      unknownField(['name', 'rpm']).map((f) => ({ path: [f], value: 1, names: [`${f}: unknown field`] })),
    ),
  },
];
const admin = (key: string, accountId: string) => fc.oneof(...adminBodies(accountId).map((endpoint) => fieldProbes(endpoint, key)));

export const headerQueryProperties: PropertySpec[] = [
  { name: 'a key presented wrongly on any /v1 route is 401', probes: ({ key }) => credentials(key), numRuns: 80 },
  { name: 'a wrong admin token is 401', probes: ({ key, accountId }) => adminCredentials(key, accountId), numRuns: 25 },
  { name: 'a wrong or missing messages version is 400 naming anthropic-version', probes: ({ key }) => versions(key), numRuns: 40 },
  { name: 'a speech model missing, unknown or given twice is 400 naming model', probes: ({ key }) => speechModel(key), numRuns: 40 },
  { name: 'Idempotency-Key on a streamed call, empty or too long is 400 naming it', probes: ({ key }) => idempotencyKeys(key), numRuns: 40 },
  { name: 'a bad filter or limit in the query is 400 naming it', probes: ({ key, accountId }) => queries(key, accountId), numRuns: 50 },
  { name: 'an unknown task or model id is 404 (400 when it holds a NUL)', probes: ({ key }) => unknownIds(key), numRuns: 50 },
  { name: 'an admin body with one invalid field is 400 naming it', probes: ({ key, accountId }) => admin(key, accountId), numRuns: 60 },
];
