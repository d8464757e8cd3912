// The bench's minimal relays do a JSON gateway's HTTP work and nothing else: the caller's body
// parsed and sent upstream, the upstream's answer parsed and sent back, from node:http or Fastify.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { RELAY_KINDS, startMinimalRelay } from '../../bench/minimal-relay.js';
import { type RelaysResults, relaysTable } from '../../bench/relays.js';

const ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }],
  usage: { total_tokens: 3 },
};
const received: { path: string; authorization: string | undefined; body: Record<string, unknown> }[] = [];
let upstream: http.Server;
let upstreamPort = 0;

before(async () => {
  upstream = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(text) });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ANSWER));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as AddressInfo).port;
});
after(() => upstream.close());

for (const kind of RELAY_KINDS) {
  test(`the ${kind} relay sends the caller's chat upstream unstreamed and answers with the upstream's JSON`, async () => {
    const relay = await startMinimalRelay(kind, 0, upstreamPort);
    try {
      received.length = 0;
      const body = { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 };
      const response = await request(`http://127.0.0.1:${relay.port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(await response.body.json(), ANSWER);
      assert.equal(received.length, 1);
      assert.equal(received[0]!.path, '/v1/chat/completions');
      assert.equal(received[0]!.authorization, 'Bearer sk-sandbox');
      assert.deepEqual(received[0]!.body, { ...body, stream: false });
    } finally {
      await relay.close();
    }
  });
}

test('the relays table gives each target its ratios to the floor', () => {
  const figures = (requestsPerSecond: number, cpuMsPerRequest: number) => ({ requestsPerSecond, cpuMsPerRequest, errors: 0, runs: [] });
  const results = {
    targets: {
      floor: figures(1000, 0.1),
      'relay-undici': figures(1100, 0.09),
      'relay-fastify': figures(900, 0.12),
      'relay-billed': figures(700, 0.15),
      gateway: figures(500, 0.25),
    },
  } as unknown as RelaysResults;
  const lines = relaysTable(results, 'markdown').split('\n');
  assert.equal(lines[0], '| target | req/s | CPU µs/req | req/s ÷ floor | CPU ÷ floor | errors |');
  assert.equal(lines[2], '| floor | 1000 | 100 | 1.00× | 1.00× | 0 |');
  assert.equal(lines[5], '| relay-billed | 700 | 150 | 0.70× | 1.50× | 0 |');
  assert.equal(lines[6], '| gateway | 500 | 250 | 0.50× | 2.50× | 0 |');
});
