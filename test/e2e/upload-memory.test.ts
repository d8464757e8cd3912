// Memory under parallel large uploads, measured on a real `tollroute serve` process: bodies are
// streamed to disk, so the gateway's resident set stays flat however big they are.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { freePort, type ServingProcess, startServe } from '../helpers/processes.js';
import { type Part, postUpload, residentBytes, type UploadAnswer, wavPart } from '../helpers/uploads.js';

const MB = 1024 * 1024;
const PARALLEL = 6;
// Six ~60 MB uploads would take 360 MB or more held whole in memory; streamed, a few MB each.
const GROWTH_LIMIT = 96 * MB;

describe('memory under six parallel large uploads', { timeout: 120_000 }, () => {
  let serve: ServingProcess;
  let base: string;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-rss-'));
  const figures: string[] = [];

  const admin = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
    const res = await request(`${base}${p}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.body.json()) as any;
  };
  const keyWith = async (creditMicros: number) => {
    const account = await admin('POST', '/admin/accounts', { name: 'rss', credit_micros: creditMicros });
    return (await admin('POST', `/admin/accounts/${account.id}/keys`, {})).key as string;
  };

  /** Runs the uploads side by side, sampling the gateway's resident set; its growth over the baseline at the peak. */
  async function measure(label: string, uploads: () => Promise<UploadAnswer>[]) {
    const pid = serve.child.pid!;
    const baseline = (await residentBytes(pid)).rss;
    // Resets VmHWM to the current RSS (Linux), so the peak covers this run alone; sampling backs it up.
    let peakResets = true;
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      peakResets = false;
    }
    let sampled = baseline;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        sampled = Math.max(sampled, (await residentBytes(pid)).rss);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const started = performance.now();
    let answers: UploadAnswer[];
    try {
      answers = await Promise.all(uploads());
    } finally {
      sampling = false;
      await sampler;
    }
    const seconds = (performance.now() - started) / 1000;
    const peak = Math.max(sampled, peakResets ? (await residentBytes(pid)).peak : 0);
    const growth = peak - baseline;
    figures.push(
      `${label}: RSS ${(baseline / MB).toFixed(0)} -> peak ${(peak / MB).toFixed(0)} MB (+${(growth / MB).toFixed(1)} MB) in ${seconds.toFixed(1)} s`,
    );
    return { statuses: answers.map((a) => a.status), growth, answers };
  }

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    serve = await startServe({
      PORT: String(port),
      SANDBOX_PORT: String(await freePort()),
      TOLLROUTE_DATA_DIR: dataDir,
      TOLLROUTE_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
    });
    // Warm up every path measured below, so code loaded on first use is not counted as growth.
    const key = await keyWith(10_000_000);
    const small: Part = { name: 'file', filename: 'a.bin', contentType: 'application/octet-stream', bytes: 2 * MB };
    assert.equal((await postUpload(`${base}/v1/files`, [small], { authorization: `Bearer ${key}` })).status, 201);
    assert.equal(
      (await postUpload(`${base}/v1/audio/translations`, [{ name: 'model', value: 'sandbox-ast' }, wavPart(2)], { authorization: `Bearer ${key}` })).status,
      200,
    );
    const broke = await keyWith(0);
    assert.equal(
      (await postUpload(`${base}/v1/audio/translations`, [{ name: 'model', value: 'sandbox-ast' }, wavPart(60)], { authorization: `Bearer ${broke}` })).status,
      402,
    );
  });
  after(async () => {
    console.log(figures.join('\n'));
    serve.child.kill('SIGTERM');
    await serve.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('six 60 MB uploads to /v1/files at once are stored, and the gateway grows by far less than one of them', async () => {
    const key = await keyWith(1_000_000);
    const part: Part = { name: 'file', filename: 'recording.bin', contentType: 'application/octet-stream', bytes: 60 * MB };
    const { statuses, growth } = await measure('files, 6 x 60 MB stored', () =>
      Array.from({ length: PARALLEL }, () => postUpload(`${base}/v1/files`, [part], { authorization: `Bearer ${key}` })),
    );
    assert.deepEqual(statuses, Array(PARALLEL).fill(201));
    assert.ok(growth < GROWTH_LIMIT, `RSS grew by ${(growth / MB).toFixed(1)} MB`);
  });

  test('six 60 MB WAVs to /v1/audio/translations at once are spooled, checked from disk and refused 402 on the full hold, and memory stays flat', async () => {
    // Covers one second of audio (195 micros), not the 1 966 s each file holds for.
    const key = await keyWith(10_000);
    const { statuses, growth, answers } = await measure('translations, 6 x 60 MB read then 402', () =>
      Array.from({ length: PARALLEL }, () =>
        postUpload(`${base}/v1/audio/translations`, [{ name: 'model', value: 'sandbox-ast' }, wavPart(1_966)], { authorization: `Bearer ${key}` }),
      ),
    );
    assert.deepEqual(statuses, Array(PARALLEL).fill(402));
    // Refused on the hold, after the whole file was read: each body was sent in full first.
    assert.deepEqual(
      answers.map((a) => a.sentBeforeAnswer === a.length),
      Array(PARALLEL).fill(true),
    );
    assert.ok(growth < GROWTH_LIMIT, `RSS grew by ${(growth / MB).toFixed(1)} MB`);
    assert.deepEqual(readdirSync(path.join(dataDir, 'uploads')), [], 'every spooled upload is deleted');
  });

  test('six 90 MB WAVs from a zero-balance key are refused before their bodies are read', async () => {
    const key = await keyWith(0);
    const sent: number[] = [];
    const { statuses, growth } = await measure('translations, 6 x 90 MB zero balance', () =>
      Array.from({ length: PARALLEL }, async () => {
        const answer = await postUpload(`${base}/v1/audio/translations`, [{ name: 'model', value: 'sandbox-ast' }, wavPart(2_950)], {
          authorization: `Bearer ${key}`,
        });
        sent.push(answer.sentBeforeAnswer / answer.length);
        return answer;
      }),
    );
    assert.deepEqual(statuses, Array(PARALLEL).fill(402));
    assert.ok(
      sent.every((share) => share < 0.5),
      `shares of each body sent before the answer: ${sent.map((s) => s.toFixed(3)).join(', ')}`,
    );
    assert.ok(growth < GROWTH_LIMIT, `RSS grew by ${(growth / MB).toFixed(1)} MB`);
  });
});
