// Uploads side by side cannot pass the account's file quota, on disk or in the store: each takes its
// room before its bytes are written, so together they never hold more than the quota, even mid-way.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const QUOTA = 3_000_000;
const FILE_BYTES = 900_000;
const BOUNDARY = 'quota-boundary';
const HEAD = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
const TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

/** One upload on a raw socket: the head and `firstBytes` of the file now, the rest when told. */
async function openUpload(gw: TestGateway, key: string, firstBytes: number) {
  const socket: Socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
  await once(socket, 'connect');
  socket.on('error', () => {});
  let answer = '';
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString('latin1');
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const length = HEAD.length + FILE_BYTES + TAIL.length;
  socket.write(
    `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`,
  );
  socket.write(Buffer.concat([HEAD, Buffer.alloc(firstBytes, 3)]));
  return {
    finish() {
      if (!socket.destroyed) socket.write(Buffer.concat([Buffer.alloc(FILE_BYTES - firstBytes, 3), TAIL]));
    },
    status: async () => {
      await eventually(() => /^HTTP\/1\.1 \d{3}/.test(answer) || socket.destroyed, 10_000);
      await closed;
      return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
    },
  };
}

describe('the file quota with uploads side by side', () => {
  let gw: TestGateway;
  const bytesOnDisk = () => {
    try {
      const dir = path.join(gw.dataDir, 'files');
      return readdirSync(dir).reduce((sum, name) => sum + (statSync(path.join(dir, name), { throwIfNoEntry: false })?.size ?? 0), 0);
    } catch {
      return 0;
    }
  };
  before(async () => {
    gw = await startTestGateway({ files: { max_file_bytes: 1_000_000, max_bytes_per_account: QUOTA } });
  });
  after(() => gw.close());

  test('six uploads that together pass the quota never hold more than it on disk, and the stored total stays within it', async () => {
    const { accountId, key } = await gw.account();
    const uploads = [];
    for (let i = 0; i < 6; i++) uploads.push(await openUpload(gw, key, 800_000));
    // every upload has sent 800 000 bytes and waits: what they hold on disk now is at its peak
    await eventually(async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return bytesOnDisk() >= 3 * 800_000;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const peak = bytesOnDisk();
    for (const upload of uploads) upload.finish();
    const statuses = await Promise.all(uploads.map((upload) => upload.status()));
    assert.ok(peak <= QUOTA, `${peak} bytes on disk mid-way`);
    assert.deepEqual([...statuses].sort(), [201, 201, 201, 413, 413, 413]);
    const kept = await gw.gateway.store.db.selectFrom('files').select('bytes').where('account_id', '=', accountId).execute();
    assert.deepEqual(
      kept.map((f) => Number(f.bytes)),
      [FILE_BYTES, FILE_BYTES, FILE_BYTES],
    );
    assert.equal(bytesOnDisk(), 3 * FILE_BYTES);
  });
});
