// Result files the minutes upstream names: fetched under the URL policy, and only up to a size.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { RefusedUrlError } from '../../../src/net/url-policy.js';
import { fetchResultFile, ResultFileTooLargeError } from '../../../src/upstreams/volc-minutes/client.js';

let base: string;
const served: string[] = [];
const server = createServer((req, res) => {
  served.push(req.url ?? '');
  if (req.url === '/small.json') return res.end(JSON.stringify({ paragraph: 'ok' }));
  if (req.url === '/big.json') return res.end(JSON.stringify({ paragraph: 'x'.repeat(10_000) }));
  if (req.url === '/moved') return res.writeHead(302, { location: '/small.json' }).end();
  res.writeHead(404).end();
});
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const signal = new AbortController().signal;
const allowed = { allowPrivate: true, maxBytes: 1_000 };

test('a result file within the limit is read as JSON', async () => {
  assert.deepEqual(await fetchResultFile(`${base}/small.json`, signal, allowed), { paragraph: 'ok' });
});

test('a result file on a refused address is never requested', async () => {
  served.length = 0;
  await assert.rejects(
    fetchResultFile(`${base}/small.json`, signal, { allowPrivate: false, maxBytes: 1_000 }),
    (error) => error instanceof RefusedUrlError && error.message === 'result file: refused address 127.0.0.1 (loopback)',
  );
  assert.deepEqual(served, []);
});

test('a result file past the limit fails the read instead of filling memory', async () => {
  await assert.rejects(
    fetchResultFile(`${base}/big.json`, signal, allowed),
    (error) => error instanceof ResultFileTooLargeError && error.message === 'result file is larger than 1000 bytes',
  );
});

test('a redirect is not followed', async () => {
  served.length = 0;
  await assert.rejects(fetchResultFile(`${base}/moved`, signal, allowed), /result file answered 302/);
  assert.deepEqual(served, ['/moved']);
});
