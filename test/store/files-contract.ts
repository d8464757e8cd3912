// Contract of the file queries and the quota check, on SQLite and PostgreSQL alike.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createAccount } from '../../src/billing/accounts.js';
import { storeFileWithinQuota } from '../../src/files/quota.js';
import { deleteExpiredFiles } from '../../src/files/sweep.js';
import { accountFileBytes, expiredFiles, findAccountFile, findFile, insertFile } from '../../src/store/files.js';
import type { StoreContext } from './store-context.js';

let n = 0;
const row = (accountId: string, { bytes = 100, createdAt = 1_000, expiresAt = 10_000, storagePath = '/nowhere' } = {}) => ({
  id: `file_${String(++n).padStart(32, '0')}`,
  account_id: accountId,
  filename: 'a.mp3',
  content_type: 'audio/mpeg',
  bytes,
  storage_path: storagePath,
  created_at: createdAt,
  expires_at: expiresAt,
});

export function filesContract(ctx: StoreContext): void {
  describe('files', () => {
    test('a file is found while it lives, by anyone by id and by its account only among accounts', async () => {
      const owner = await createAccount(ctx.store(), { name: 'owner', now: 1 });
      const other = await createAccount(ctx.store(), { name: 'other', now: 1 });
      const file = row(owner.id);
      await insertFile(ctx.store().db, file);
      assert.deepEqual(await findFile(ctx.store().db, { id: file.id, now: 9_999 }), file);
      assert.equal(await findFile(ctx.store().db, { id: file.id, now: 10_000 }), undefined);
      assert.deepEqual(await findAccountFile(ctx.store().db, { accountId: owner.id, id: file.id, now: 5_000 }), file);
      assert.equal(await findAccountFile(ctx.store().db, { accountId: other.id, id: file.id, now: 5_000 }), undefined);
    });

    test("an account's bytes count its live files only", async () => {
      const a = await createAccount(ctx.store(), { name: 'a', now: 1 });
      const b = await createAccount(ctx.store(), { name: 'b', now: 1 });
      assert.equal(await accountFileBytes(ctx.store().db, { accountId: a.id, now: 5_000 }), 0);
      for (const file of [
        row(a.id, { bytes: 3_000_000_000 }),
        row(a.id, { bytes: 7 }),
        row(a.id, { bytes: 1_000, expiresAt: 5_000 }),
        row(b.id, { bytes: 50 }),
      ]) {
        await insertFile(ctx.store().db, file);
      }
      assert.equal(await accountFileBytes(ctx.store().db, { accountId: a.id, now: 5_000 }), 3_000_000_007);
    });

    test('expired files come oldest first, a batch at a time', async () => {
      const a = await createAccount(ctx.store(), { name: 'a', now: 1 });
      const files = [row(a.id, { expiresAt: 300 }), row(a.id, { expiresAt: 100 }), row(a.id, { expiresAt: 200 }), row(a.id, { expiresAt: 900 })];
      for (const file of files) await insertFile(ctx.store().db, file);
      assert.deepEqual(
        await expiredFiles(ctx.store().db, { now: 300, limit: 2 }),
        [files[1], files[2]].map((f) => ({ id: f!.id, storage_path: f!.storage_path })),
      );
      assert.equal((await expiredFiles(ctx.store().db, { now: 300, limit: 10 })).length, 3);
    });

    test('the quota admits a file only while the live total stays within it, uploads at once included', async () => {
      const a = await createAccount(ctx.store(), { name: 'a', now: 1 });
      await insertFile(ctx.store().db, row(a.id, { bytes: 5_000, expiresAt: 1_500 })); // expired at 2 000: not counted
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, () => storeFileWithinQuota(ctx.store(), { row: row(a.id, { bytes: 400 }), quotaBytes: 1_000, now: 2_000 })),
      );
      assert.deepEqual(outcomes.map((o) => o.stored).sort(), [false, false, false, false, true, true]);
      assert.equal(await accountFileBytes(ctx.store().db, { accountId: a.id, now: 2_000 }), 800);
      assert.deepEqual(await storeFileWithinQuota(ctx.store(), { row: row(a.id, { bytes: 201 }), quotaBytes: 1_000, now: 2_000 }), {
        stored: false,
        usedBytes: 800,
      });
      assert.deepEqual(await storeFileWithinQuota(ctx.store(), { row: row(a.id, { bytes: 200 }), quotaBytes: 1_000, now: 2_000 }), { stored: true });
    });

    test('the sweep deletes expired files from disk and store, and leaves live ones', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-sweep-'));
      try {
        const a = await createAccount(ctx.store(), { name: 'a', now: 1 });
        const onDisk = (name: string) => {
          writeFileSync(path.join(dir, name), 'x');
          return path.join(dir, name);
        };
        const expired = Array.from({ length: 150 }, (_, i) => row(a.id, { expiresAt: 100 + i, storagePath: onDisk(`old${i}`) }));
        const live = row(a.id, { expiresAt: 5_000, storagePath: onDisk('live') });
        const gone = row(a.id, { expiresAt: 100, storagePath: path.join(dir, 'already-gone') }); // its bytes were removed before a crash
        for (const file of [...expired, live, gone]) await insertFile(ctx.store().db, file);
        assert.equal(await deleteExpiredFiles(ctx.store(), 1_000), 151);
        assert.deepEqual(
          expired.filter((f) => existsSync(f.storage_path)),
          [],
        );
        assert.equal(existsSync(live.storage_path), true);
        assert.deepEqual(await findFile(ctx.store().db, { id: live.id, now: 1_000 }), live);
        assert.deepEqual(await expiredFiles(ctx.store().db, { now: 1_000, limit: 10 }), []);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
