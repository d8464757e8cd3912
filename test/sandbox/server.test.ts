import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startSandbox } from '../../src/sandbox/server.js';
import { AUTH, addFault, loggedRequests, pollUntil, postJson } from './sandbox-client.js';

test('the sandbox listens on a free port and says where', async () => {
  const sandbox = await startSandbox({ port: 0 });
  try {
    assert.ok(sandbox.port > 0);
    assert.equal(sandbox.url, `http://127.0.0.1:${sandbox.port}`);
    assert.equal((await fetch(`${sandbox.url}/__sandbox/requests`)).status, 200);
  } finally {
    await sandbox.close();
  }
});

test('closing the sandbox ends hanging requests instead of waiting for them', async () => {
  const sandbox = await startSandbox({ port: 0 });
  await addFault(sandbox.url, { hang: true });
  const pending = postJson(`${sandbox.url}/v1/chat/completions`, { model: 'm', messages: [] }, AUTH);
  await pollUntil(async () => (await loggedRequests(sandbox.url))[0]);
  await sandbox.close();
  await assert.rejects(pending, TypeError);
});

test('a body over the size cap is refused with 413', async () => {
  const sandbox = await startSandbox({ port: 0, maxBodyBytes: 100 });
  try {
    const res = await postJson(`${sandbox.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(200) }] });
    assert.equal(res.status, 413);
    assert.deepEqual(await loggedRequests(sandbox.url), []);
  } finally {
    await sandbox.close();
  }
});
