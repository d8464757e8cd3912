// POST /v1/files and what follows: limits and quota, safe serving, DELETE, expiry, and file_url.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { deleteExpiredFiles } from '../../src/files/sweep.js';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postUpload } from '../helpers/uploads.js';

const BILLING = { error: 'insufficient balance -- please top up or upgrade the service plan', type: 'billing_error' };
const QUOTA = "file: the account's file storage of 3000000 bytes would be exceeded; delete files (DELETE /v1/files/{id}) or wait for them to expire";

async function upload(
  gw: TestGateway,
  key: string,
  { name = 'meeting.mp3', type = 'audio/mpeg', text = 'ID3 fake meeting audio' }: { name?: string; type?: string; text?: string },
) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(Buffer.from(text))], { type }), name);
  const res = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

const bigUpload = (gw: TestGateway, key: string, bytes: number) =>
  postUpload(`${gw.url}/v1/files`, [{ name: 'file', filename: 'big.bin', contentType: 'application/octet-stream', bytes }], { authorization: `Bearer ${key}` });

describe('files', () => {
  let gw: TestGateway;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-files-'));
  const stored = () => readdirSync(path.join(dataDir, 'files'));
  before(async () => {
    gw = await startTestGateway({
      data_dir: dataDir,
      // As in production: the gateway's own address is loopback, so only the exemption lets its uploads through.
      network: { allow_private_urls: false },
      files: { max_file_bytes: 1_000_000, max_bytes_per_account: 3_000_000 },
    });
  });
  after(async () => {
    await gw.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('uploading', () => {
    test('an upload answers its URL, size and expiry (7 days by default)', async () => {
      const { key } = await gw.account();
      const { status, body } = await upload(gw, key, {});
      assert.equal(status, 201);
      assert.match(body.id, /^file_[0-9a-f]{32}$/);
      assert.deepEqual(body, {
        id: body.id,
        object: 'file',
        url: `${gw.url}/files/${body.id}/meeting.mp3`,
        bytes: 22,
        filename: 'meeting.mp3',
        created_at: body.created_at,
        expires_at: new Date(Date.parse(body.created_at) + 7 * 24 * 3600 * 1000).toISOString(),
      });
    });

    test('a file sent as a text field is 400 saying it must be a file, and nothing is stored', async () => {
      const { key } = await gw.account();
      const before = stored().length;
      const form = new FormData();
      form.append('file', 'meeting.mp3');
      const res = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      assert.deepEqual(
        { status: res.status, body: await res.json() },
        { status: 400, body: { error: 'file: must be a file (a part with a filename), not a text field', type: 'invalid_request_error' } },
      );
      assert.equal(stored().length, before);
    });

    test('an upload without a valid key is 401 before its body is read', async () => {
      const res = await bigUpload(gw, 'tr-not-a-key', 90_000_000);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 401, body: { error: 'invalid or missing API key', type: 'auth_error' } });
      assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
    });

    test('a zero-balance account is refused with 402 before its upload is read, and nothing is stored', async () => {
      const { key } = await gw.account({ creditMicros: 0 });
      const before = stored().length;
      const res = await bigUpload(gw, key, 90_000_000);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 402, body: BILLING });
      assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
      assert.equal(stored().length, before);
    });

    test('a file past files.max_file_bytes is 413 naming the limit, and no part of it is kept', async () => {
      const { key } = await gw.account();
      const before = stored().length;
      const res = await bigUpload(gw, key, 1_000_001);
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 413, body: { error: 'file: larger than the limit of 1000000 bytes', type: 'invalid_request_error' } },
      );
      assert.equal(stored().length, before);
      assert.equal((await bigUpload(gw, key, 1_000_000)).status, 201);
    });

    test('the account quota: uploads fit until it is full, then 413 (before the body once full); other accounts are unaffected', async () => {
      const { key } = await gw.account();
      for (let i = 0; i < 2; i++) assert.equal((await bigUpload(gw, key, 1_000_000)).status, 201);
      // 1 000 000 bytes of room left: a file that would pass it is refused as it streams.
      const over = await bigUpload(gw, key, 1_000_000 + 500);
      assert.deepEqual(
        { status: over.status, body: over.body },
        { status: 413, body: { error: 'file: larger than the limit of 1000000 bytes', type: 'invalid_request_error' } },
      );
      assert.equal((await bigUpload(gw, key, 999_990)).status, 201);
      const tooMuch = await bigUpload(gw, key, 11);
      assert.deepEqual({ status: tooMuch.status, body: tooMuch.body }, { status: 413, body: { error: QUOTA, type: 'invalid_request_error' } });
      assert.equal((await bigUpload(gw, key, 10)).status, 201);
      // Full: refused before a byte is read.
      const full = await bigUpload(gw, key, 50_000_000);
      assert.deepEqual({ status: full.status, body: full.body }, { status: 413, body: { error: QUOTA, type: 'invalid_request_error' } });
      assert.ok(full.sentBeforeAnswer < full.length / 2, `sent ${full.sentBeforeAnswer} of ${full.length} bytes before the answer`);
      const other = await gw.account();
      assert.equal((await bigUpload(gw, other.key, 1_000_000)).status, 201);
    });

    test('uploads running side by side share the room left: together they never pass the quota', async () => {
      const { accountId, key } = await gw.account();
      const results = await Promise.all(Array.from({ length: 5 }, () => bigUpload(gw, key, 900_000)));
      assert.deepEqual(results.map((r) => r.status).sort(), [201, 201, 201, 413, 413]);
      const kept = await gw.gateway.store.db.selectFrom('files').select('bytes').where('account_id', '=', accountId).execute();
      assert.deepEqual(
        kept.map((f) => f.bytes),
        [900_000, 900_000, 900_000],
      );
    });

    test('a key past its rate limit is refused with 429 before its upload is read', async () => {
      const { key } = await gw.account({ rpm: 1 });
      assert.equal((await upload(gw, key, {})).status, 201);
      const res = await bigUpload(gw, key, 50_000_000);
      assert.deepEqual({ status: res.status, type: res.body.type }, { status: 429, type: 'rate_limit_error' });
      assert.ok(res.sentBeforeAnswer < res.length / 2, `sent ${res.sentBeforeAnswer} of ${res.length} bytes before the answer`);
    });
  });

  describe('serving', () => {
    const served = async (url: string) => {
      const res = await request(url);
      const h = res.headers;
      return {
        status: res.statusCode,
        body: await res.body.text(),
        headers: {
          type: h['content-type'],
          disposition: h['content-disposition'],
          nosniff: h['x-content-type-options'],
          csp: h['content-security-policy'],
          length: h['content-length'],
        },
      };
    };

    test('a file is served as a download, never sniffed, with its own audio type and its name', async () => {
      const { key } = await gw.account();
      const file = (await upload(gw, key, {})).body;
      assert.deepEqual(await served(file.url), {
        status: 200,
        body: 'ID3 fake meeting audio',
        headers: {
          type: 'audio/mpeg',
          disposition: `attachment; filename="meeting.mp3"; filename*=UTF-8''meeting.mp3`,
          nosniff: 'nosniff',
          csp: "default-src 'none'; sandbox",
          length: '22',
        },
      });
    });

    for (const [type, name] of [
      ['text/html', 'page.html'],
      ['image/svg+xml', 'logo.svg'],
      ['application/xhtml+xml', 'x.xhtml'],
      ['text/javascript', 'a.js'],
      ['', 'none'],
    ] as const) {
      test(`an upload declared ${type || 'without a type'} is served as application/octet-stream, as an attachment`, async () => {
        const { key } = await gw.account();
        const file = (await upload(gw, key, { type, name, text: '<svg onload="alert(document.domain)"><script>alert(1)</script></svg>' })).body;
        const { headers } = await served(file.url);
        assert.deepEqual(
          { type: headers.type, disposition: headers.disposition, nosniff: headers.nosniff },
          {
            type: 'application/octet-stream',
            disposition: `attachment; filename="${name}"; filename*=UTF-8''${name}`,
            nosniff: 'nosniff',
          },
        );
      });
    }

    test('a name with separators and other scripts is served in a header that cannot be broken out of', async () => {
      const { key } = await gw.account();
      const file = (await upload(gw, key, { name: 'a;b%c.pdf', type: 'application/pdf' })).body;
      assert.deepEqual((await served(file.url)).headers.disposition, `attachment; filename="a_b_c.pdf"; filename*=UTF-8''a%3Bb%25c.pdf`);
      const named = (await upload(gw, key, { name: '会议 记录.wav', type: 'audio/wav' })).body;
      assert.equal(named.url, `${gw.url}/files/${named.id}/_.wav`);
      assert.deepEqual(
        (await served(named.url)).headers.disposition,
        `attachment; filename="__ __.wav"; filename*=UTF-8''%E4%BC%9A%E8%AE%AE%20%E8%AE%B0%E5%BD%95.wav`,
      );
    });
  });

  describe('DELETE /v1/files/{id}', () => {
    test('the owner deletes a file: gone from its URL and from disk, and its bytes leave the quota', async () => {
      const { key } = await gw.account();
      const file = (await upload(gw, key, {})).body;
      assert.ok(existsSync(path.join(dataDir, 'files', file.id)));
      assert.deepEqual(await gw.call(key, 'DELETE', `/v1/files/${file.id}`), { status: 200, body: { id: file.id, object: 'file', deleted: true } });
      assert.equal((await request(file.url)).statusCode, 404);
      assert.equal(existsSync(path.join(dataDir, 'files', file.id)), false);
      assert.deepEqual(await gw.call(key, 'DELETE', `/v1/files/${file.id}`), {
        status: 404,
        body: { error: `file ${file.id} not found`, type: 'not_found_error' },
      });
      // the room is back: three full-size files fit again
      for (let i = 0; i < 3; i++) assert.equal((await bigUpload(gw, key, 1_000_000)).status, 201);
    });

    test("another account's file is 404 to it, exactly like a missing one, and stays served", async () => {
      const owner = await gw.account();
      const other = await gw.account();
      const file = (await upload(gw, owner.key, {})).body;
      assert.deepEqual(await gw.call(other.key, 'DELETE', `/v1/files/${file.id}`), {
        status: 404,
        body: { error: `file ${file.id} not found`, type: 'not_found_error' },
      });
      assert.deepEqual(await gw.call(other.key, 'DELETE', '/v1/files/not-an-id'), {
        status: 404,
        body: { error: 'file not-an-id not found', type: 'not_found_error' },
      });
      assert.equal((await request(file.url)).statusCode, 200);
    });

    test('a delete needs a key', async () => {
      assert.equal((await gw.call('tr-wrong', 'DELETE', `/v1/files/file_${'0'.repeat(32)}`)).status, 401);
    });
  });

  describe('file_url', () => {
    const minutes = (key: string, fileUrl: string) =>
      gw.call(key, 'POST', '/v1/audio/minutes', { model: 'vendor-minutes', file_url: fileUrl, file_type: 'audio', all_activate: true });

    test("the gateway's own upload is accepted although the gateway is on loopback", async () => {
      const { key } = await gw.account();
      const file = (await upload(gw, key, {})).body;
      assert.equal((await minutes(key, file.url)).status, 200);
    });

    test('paths that only start like an upload are judged as the address they are: refused on loopback', async () => {
      const { key } = await gw.account();
      const file = (await upload(gw, key, {})).body;
      const host = new URL(gw.url).hostname;
      const cases: [string, string][] = [
        [`${gw.url}/files/../metrics`, `file_url: refused address ${host} (loopback)`],
        [`${gw.url}/files/${file.id}/../../metrics`, `file_url: refused address ${host} (loopback)`],
        [`${gw.url}/files/${file.id}/meeting.mp3?x=1`, `file_url: refused address ${host} (loopback)`],
        [`${gw.url}/files/${file.id}`, `file_url: refused address ${host} (loopback)`],
        [`${gw.url}/files/%2e%2e/metrics`, 'file_url: must not contain an encoded dot segment (%2e%2e)'],
        [`${gw.url}/files/.%2E/metrics`, 'file_url: must not contain an encoded dot segment (.%2E)'],
        [`${gw.url}/files/..%2fmetrics`, 'file_url: must not contain an encoded / or \\ in its path'],
        [`${gw.url}/files\\..\\metrics`, 'file_url: must not contain a backslash'],
      ];
      for (const [url, message] of cases) {
        assert.deepEqual(await minutes(key, url), { status: 400, body: { error: message, type: 'invalid_request_error' } }, url);
      }
    });

    test('a deleted upload is refused as file_url', async () => {
      const { key } = await gw.account();
      const file = (await upload(gw, key, {})).body;
      await gw.call(key, 'DELETE', `/v1/files/${file.id}`);
      assert.deepEqual(await minutes(key, file.url), {
        status: 400,
        body: { error: 'file_url: no such file (deleted or expired)', type: 'invalid_request_error' },
      });
    });

    test('result files the minutes upstream names are fetched under the URL policy: on loopback they are refused, the task fails and is refunded', async () => {
      const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
      const file = (await upload(gw, key, {})).body;
      const created = await minutes(key, file.url);
      const done = await eventually(async () => {
        const { body } = await gw.call(key, 'GET', `/v1/audio/minutes/${created.body.id}`);
        return body.status === 'failed' && body;
      });
      assert.deepEqual(done.error, { code: 'result_file_refused', message: 'the upstream named a result file at an address the gateway does not fetch from' });
      assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: 10_000_000, held_micros: 0 });
    });
  });

  test('the sweep deletes expired files: row and bytes; until then they are served', async () => {
    const { key } = await gw.account();
    const file = (await upload(gw, key, {})).body;
    await deleteExpiredFiles(gw.gateway.store, Date.parse(file.expires_at) - 1);
    assert.equal((await request(file.url)).statusCode, 200);
    assert.ok((await deleteExpiredFiles(gw.gateway.store, Date.parse(file.expires_at))) >= 1);
    assert.equal((await request(file.url)).statusCode, 404);
    assert.equal(existsSync(path.join(dataDir, 'files', file.id)), false);
    assert.equal(await gw.gateway.store.db.selectFrom('files').select('id').where('id', '=', file.id).executeTakeFirst(), undefined);
  });
});

describe('files with a short life and a small result-file limit', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ files: { ttl_ms: 400, sweep_ms: 50, result_file_max_bytes: 64 } });
  });
  after(() => gw.close());

  test('an expired file is 404 at once and deleted by the running sweep', async () => {
    const { key } = await gw.account();
    const file = (await upload(gw, key, {})).body;
    assert.equal(Date.parse(file.expires_at) - Date.parse(file.created_at), 400);
    await eventually(async () => (await gw.gateway.store.db.selectFrom('files').select('id').where('id', '=', file.id).executeTakeFirst()) === undefined);
    assert.equal((await request(file.url)).statusCode, 404);
  });

  test('a result file past files.result_file_max_bytes fails the task, refunded', async () => {
    const { accountId, key } = await gw.account({ creditMicros: 10_000_000 });
    const created = await gw.call(key, 'POST', '/v1/audio/minutes', {
      model: 'vendor-minutes',
      file_url: 'https://media.example.com/meeting.mp3?duration_s=30',
      all_activate: true,
    });
    const done = await eventually(async () => {
      const { body } = await gw.call(key, 'GET', `/v1/audio/minutes/${created.body.id}`);
      return body.status === 'failed' && body;
    });
    assert.deepEqual(done.error, { code: 'result_file_refused', message: "the upstream's result file is larger than 64 bytes" });
    assert.deepEqual(await gw.settled(accountId), { ...(await gw.balance(accountId)), balance_micros: 10_000_000, held_micros: 0 });
  });
});
