// Reading a recording's length from its head, within a budget.
import assert from 'node:assert/strict';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { readDurationSeconds } from '../../src/media/duration.js';
import { makeWav } from '../helpers/wav.js';

const servers: Server[] = [];
after(() => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/meeting.wav`;
}

const budget = { timeoutMs: 1_000, headBytes: 4096, allowPrivate: true };

test('a URL is read from the head its range request asks for, never the whole file', async () => {
  const wav = makeWav({ sampleRate: 8_000, bits: 8, ms: 600_000 });
  const ranges: (string | undefined)[] = [];
  const url = await serve((req, res) => {
    ranges.push(req.headers.range);
    res.writeHead(206, { 'content-type': 'audio/wav', 'content-range': `bytes 0-${budget.headBytes - 1}/${wav.length}` });
    res.end(wav.subarray(0, budget.headBytes));
  });
  assert.equal(await readDurationSeconds({ url }, budget), 600);
  assert.deepEqual(ranges, [`bytes=0-${budget.headBytes - 1}`]);
});

test('a host that ignores the range is read no further than the head', async () => {
  const wav = makeWav({ sampleRate: 8_000, bits: 8, ms: 600_000 });
  const url = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.length });
    res.end(wav);
  });
  assert.equal(await readDurationSeconds({ url }, budget), 600);
});

test('a host that never answers gives an unknown length within the budget', async () => {
  const url = await serve(() => {}); // never answers
  const started = Date.now();
  assert.equal(await readDurationSeconds({ url }, { ...budget, timeoutMs: 200 }), undefined);
  assert.ok(Date.now() - started < 1_000);
});

test('a file that is not audio gives an unknown length', async () => {
  const url = await serve((_req, res) => res.end('<html>not a recording</html>'));
  assert.equal(await readDurationSeconds({ url }, budget), undefined);
});
