// Uploads a process left when it died mid-request are removed when the gateway starts, before the
// store opens: partial files in the files folder and the upload spool, finished files kept. A disk
// such leftovers filled does not stop the gateway from starting.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, startTestGateway } from '../helpers/gateway.js';
import { freePort, LOAD_TYPESCRIPT } from '../helpers/processes.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

test('a start-up removes partial uploads and the upload spool, and keeps finished files', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-leftovers-'));
  mkdirSync(path.join(dataDir, 'files'));
  mkdirSync(path.join(dataDir, 'uploads'));
  const put = (name: string) => writeFileSync(path.join(dataDir, name), Buffer.alloc(4096, 1));
  put('files/file_00000000000000000000000000000001');
  put('files/file_00000000000000000000000000000002.part');
  put('uploads/translation_00000000000000000000000000000003');
  put('uploads/translation_00000000000000000000000000000004.part');
  const gw = await startTestGateway({ data_dir: dataDir });
  try {
    assert.deepEqual(
      { files: readdirSync(path.join(dataDir, 'files')), uploads: readdirSync(path.join(dataDir, 'uploads')) },
      { files: ['file_00000000000000000000000000000001'], uploads: [] },
    );
  } finally {
    await gw.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// A real full disk: a small tmpfs in a user and mount namespace of its own (no privilege needed
// where unprivileged user namespaces are allowed), filled by a partial upload before the start.
const namespaces = spawnSync('unshare', ['-rm', 'true']).status === 0;

test('a gateway whose data disk an unfinished upload filled still starts, after removing it', {
  skip: !namespaces && 'unshare -rm (user namespaces) is not available here',
  timeout: 60_000,
}, async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-full-start-'));
  const port = await freePort();
  const script = [
    'mount -t tmpfs -o size=8m tmpfs "$TOLLROUTE_DATA_DIR"',
    'mkdir -p "$TOLLROUTE_DATA_DIR/files"',
    // fills the disk: head stops at ENOSPC, leaving the file as large as the disk allows
    'head -c 16777216 /dev/zero > "$TOLLROUTE_DATA_DIR/files/file_00000000000000000000000000000009.part" 2>/dev/null',
    'df -k "$TOLLROUTE_DATA_DIR" | tail -1 >&2',
    `exec "${process.execPath}" --import "${LOAD_TYPESCRIPT}" "${MAIN}" serve`,
  ].join('; ');
  const child = spawn('unshare', ['-rm', 'sh', '-c', script], {
    env: { ...process.env, PORT: String(port), SANDBOX_PORT: String(await freePort()), TOLLROUTE_DATA_DIR: dataDir, TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  try {
    const outcome = await new Promise<string>((resolve) => {
      child.stderr!.on('data', (chunk) => {
        stderr += chunk;
        if (stderr.includes('listening on')) resolve('listening');
      });
      void exited.then((code) => resolve(`exited with ${code}`));
    });
    assert.equal(outcome, 'listening', stderr.slice(-2_000));
    // the disk was full when it started: the df line shows no room left
    assert.match(stderr, /\s0\s+100%/, stderr.slice(0, 500));
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});
