// The metered calls answered at once (chat, messages, responses, speech, search; plain and streamed)
// make no hidden class of their own. On Node 20 an object spread that adds a key, a getter in an
// object literal or a new AbortSignal does (src/with-fields.ts), and the young collector then
// promotes whole calls with it, to be freed only by a full collection. V8 logs every
// hidden class it makes (--log-maps): a gateway that serves more calls must make no more of any one
// kind than one that serves fewer, apart from the few the JIT and lazily loaded parts make as it goes.
// Run on the build: tsx's transform names every function it creates, which makes classes of its own.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { freePort, startServe } from '../helpers/processes.js';
import { callJson, writeServeConfig } from '../helpers/serving.js';

const DIST_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
// CI builds before it tests and requires this run; a developer's `npm test` without a build skips it.
const built = existsSync(DIST_MAIN);
if (!built && process.env.TOLLROUTE_REQUIRE_BUILT === '1') throw new Error('dist/main.js is missing: run `npm run build` first');

const json = (value: unknown) => JSON.stringify(value);
const CALLS: Record<string, { path: string; body: string; headers?: Record<string, string> }> = {
  'plain chat': { path: '/v1/chat/completions', body: json({ model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 64 }) },
  'streamed chat': {
    path: '/v1/chat/completions',
    body: json({ model: 'sandbox-chat', messages: [{ role: 'user', content: '[[words:20]]' }], stream: true, stream_options: { include_usage: true } }),
  },
  'messages translated and streamed': {
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: json({ model: 'sandbox-chat', max_tokens: 256, stream: true, messages: [{ role: 'user', content: '[[words:20]]' }] }),
  },
  speech: {
    path: '/v1/audio/speech/unidirectional?model=sandbox-tts',
    body: json({ user: { uid: 'u' }, req_params: { text: 'One sentence. And another.', speaker: 's', audio_params: { format: 'mp3', sample_rate: 24000 } } }),
  },
  search: { path: '/v1/search', body: json({ Type: 'web', Query: 'gateways', Count: 10 }) },
  responses: { path: '/v1/responses', body: json({ model: 'sandbox-chat', input: 'hello', max_output_tokens: 64 }) },
  'messages translated': {
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: json({ model: 'sandbox-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }),
  },
  'responses streamed': { path: '/v1/responses', body: json({ model: 'sandbox-chat', input: '[[words:20]]', stream: true }) },
  'messages native streamed': {
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: json({ model: 'sandbox-claude', max_tokens: 256, stream: true, messages: [{ role: 'user', content: '[[words:20]]' }] }),
  },
  'messages native': {
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: json({ model: 'sandbox-claude', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }),
  },
};
const FEW = 60;
const MORE = 240;
/** Node's own AbortSignal fields, whose maps every new signal makes. */
const ABORT_SIGNAL_FIELDS = /^symbol\("k(Aborted|Reason|Composite)"/;

describe('hidden classes made per call', { skip: !built && 'not built (npm run build)' }, () => {
  let sandbox: Sandbox;
  const dirs: string[] = [];

  before(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  after(async () => {
    await sandbox.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Hidden classes V8 made in a gateway that served `calls` of each kind (after one of each to warm up), by what made them. */
  async function classesMade(calls: number): Promise<Map<string, number>> {
    const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-maps-'));
    dirs.push(dir);
    const log = path.join(dir, 'v8.log');
    const port = await freePort();
    const configFile = writeServeConfig(dir, sandbox.url, `sqlite:${path.join(dir, 'tollroute.db')}`, { limits: { default_rpm: 1_000_000 } });
    const serving = await startServe({ PORT: String(port), TOLLROUTE_DATA_DIR: dir }, ['--config', configFile], {
      entry: DIST_MAIN,
      nodeArgs: ['--log-maps', '--no-log-maps-details', `--logfile=${log}`, '--no-logfile-per-isolate'],
      // Logging every map slows start-up several times over on a busy machine (the maps' details, not
      // needed here, would double that).
      startTimeoutMs: 90_000,
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      const account = (await callJson(base, ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'maps', credit_micros: 1_000_000_000_000 })).body;
      const { key } = (await callJson(base, ADMIN_TOKEN, 'POST', `/admin/accounts/${account.id}/keys`, {})).body;
      for (const [kind, call] of Object.entries(CALLS)) {
        for (let i = 0; i < calls + 1; i++) {
          const res = await request(base + call.path, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...call.headers },
            body: call.body,
          });
          await res.body.text();
          assert.equal(res.statusCode, 200, kind);
        }
      }
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
    return mapsMadeByName(log);
  }

  it('a gateway serving more calls makes no more hidden classes of any one kind than one serving fewer', { timeout: 300_000 }, async () => {
    const few = await classesMade(FEW);
    const more = await classesMade(MORE);
    // One class a call of any one kind would show as MORE - FEW more of one name. What starts lazily
    // (a module loaded a little later in one run) moves a name by a few, never by hundreds.
    const grown = [...more].map(([made, count]) => ({ made, more: count - (few.get(made) ?? 0) })).sort((a, b) => b.more - a.more);
    assert.ok(grown[0]!.more < (MORE - FEW) / 2, `made more often for ${MORE - FEW} more calls of each kind: ${JSON.stringify(grown.slice(0, 5))}`);
  });
});

/**
 * New maps made by adding a property (counted by the property's name), and objects put in dictionary
 * mode by a getter in a literal, from V8's log. A stream's signal (a new AbortSignal, three maps) is
 * left out: only calls answered in one piece reuse theirs (test/http/call-signal.test.ts).
 */
function mapsMadeByName(log: string): Map<string, number> {
  const made = new Map<string, number>();
  for (const line of readFileSync(log, 'latin1').split('\n')) {
    const fields = line.split(',');
    if (fields[0] !== 'map') continue;
    const name = fields.at(-1)!.replace(/ hash [0-9a-f]+/, ''); // a symbol's hash differs from run to run
    const counted = fields[1] === 'Transition' ? !ABORT_SIGNAL_FIELDS.test(name) : fields.at(-2) === 'AccessorsOverwritingNonLast';
    const key = `${fields[1]} ${name}`;
    if (counted) made.set(key, (made.get(key) ?? 0) + 1);
  }
  return made;
}
