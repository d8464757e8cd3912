import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, beforeEach, test } from 'node:test';
import WebSocket from 'ws';
import {
  type Audio,
  decodeTranslateRequest,
  decodeTranslateResponse,
  encodeTranslateRequest,
  encodeTranslateResponse,
  type TranslateResponse,
} from '../../src/sandbox/ast-proto.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import {
  AST_PATH,
  audio,
  exchangeFrames,
  finish,
  AST_HEADERS as HEADERS,
  refusedUpgrade as refused,
  SOURCE,
  startSession,
  wsUrl as wsUrlOf,
} from './ast-client.js';
import { addFault, clearSandbox, loggedRequests, pollUntil } from './sandbox-client.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ port: 0 });
});
after(() => sandbox.close());
beforeEach(() => clearSandbox(sandbox.url));

const OGG_TARGET: Audio = { format: 'ogg_opus', rate: 24000 };
const wsUrl = (path = AST_PATH) => wsUrlOf(sandbox.url, path);
const meta = (sequence: number, extra: object = {}) => ({ SessionID: 'sess-1', Sequence: sequence, StatusCode: 20000000, Message: 'OK', ...extra });

/** Opens a socket, sends the frames at once, and collects the decoded answers until the server closes. */
async function exchange(frames: Uint8Array[]): Promise<{ responses: TranslateResponse[]; closeCode: number }> {
  const { frames: received, closeCode } = await exchangeFrames(wsUrl(), frames);
  return { responses: received.map((frame) => decodeTranslateResponse(frame)), closeCode };
}

/** An upgrade the server refuses: its status and JSON body. */
async function refusedUpgrade(headers: Record<string, string>, path = AST_PATH): Promise<{ status: number; body: unknown }> {
  const { status, body } = await refused(wsUrl(path), headers);
  return { status, body };
}

test('the codec writes the wire bytes protobuf specifies and skips fields it does not know', () => {
  const bytes = encodeTranslateRequest({ event: 100, request: { mode: 's2t' } });
  // field 2 varint 100; field 6 length 5 holding field 1 length 3 "s2t"
  assert.equal(bytes.toString('hex'), '1064' + '3205' + '0a03733274');
  assert.equal(encodeTranslateResponse({ event: -1 }).toString('hex'), '10ffffffffffffffffff01');
  assert.deepEqual(decodeTranslateResponse(Buffer.from('10ffffffffffffffffff01', 'hex')), { event: -1 });
  // unknown field 15 (varint) and 16 (fixed32) around event 100
  assert.deepEqual(decodeTranslateRequest(Buffer.from('7801' + '850101020304' + '1064', 'hex')), { event: 100 });
  const request = { request_meta: { SessionID: 's', Sequence: 3 }, event: 200, source_audio: { binary_data: Buffer.from([1, 2, 3]) } };
  assert.deepEqual(decodeTranslateRequest(encodeTranslateRequest(request)), request);
  assert.throws(() => decodeTranslateRequest(Buffer.from('0a05', 'hex')), /runs past the end/);
});

test('an s2t session answers subtitles, usage and the end, all computed from the PCM byte count', async () => {
  // 80 032 bytes of 16 kHz s16le = 2501 ms
  const frames = [startSession({ mode: 's2t', source_language: 'en', target_language: 'zh' }), audio(32000), audio(32000), audio(16032), finish()];
  const { responses, closeCode } = await exchange(frames);
  assert.deepEqual(responses, [
    { response_meta: meta(1), event: 150 },
    { response_meta: meta(2), event: 651, text: 'source speech of' },
    { response_meta: meta(3), event: 652, text: 'source speech of 2501 ms' },
    { response_meta: meta(4), event: 654, text: '[zh] translated speech' },
    { response_meta: meta(5), event: 655, text: '[zh] translated speech of 2501 ms' },
    { response_meta: meta(6, { billing: { duration_ms: 2501, input_tokens: 63, output_tokens: 6 } }), event: 154 },
    { response_meta: meta(7), event: 152 },
  ]);
  assert.equal(closeCode, 1000);
});

test('the upgrade is logged with its headers, and the body becomes the session parameters and audio bytes', async () => {
  await exchange([startSession({ mode: 's2t', source_language: 'zh' }), audio(640), finish()]);
  const [entry] = await loggedRequests(sandbox.url);
  assert.deepEqual([entry.kind, entry.method, entry.path, entry.headers['x-api-app-key'], entry.aborted], ['ast', 'GET', AST_PATH, 'app-1', false]);
  assert.deepEqual(entry.body, {
    request_meta: { SessionID: 'sess-1' },
    source_audio: SOURCE,
    request: { mode: 's2t', source_language: 'zh' },
    audio_bytes: 640,
  });
});

test('an s2s session adds TTSResponse frames whose data make an Ogg Opus file with valid pages, shaped by the voice', async () => {
  const run = async (voice: string) => {
    const { responses } = await exchange([startSession({ mode: 's2s', voice }, OGG_TARGET), audio(64000), finish()]);
    return { events: responses.map((r) => r.event), ogg: Buffer.concat(responses.filter((r) => r.event === 352).map((r) => r.data as Buffer)) };
  };
  const first = await run('voice-a');
  // 2000 ms = 100 packets of 20 ms, 50 to a page: OpusHead, OpusTags and 2 audio pages
  assert.deepEqual(first.events, [150, 651, 652, 654, 655, 352, 352, 352, 352, 154, 152]);
  const pages = oggPages(first.ogg);
  assert.deepEqual(
    pages.map((p) => [p.headerType, p.sequence, p.granule]),
    [
      [2, 0, 0n],
      [0, 1, 0n],
      [0, 2, 312n + 50n * 960n],
      [4, 3, 312n + 100n * 960n],
    ],
  );
  assert.ok(pages.every((p) => p.crcMatches && p.serial === pages[0]?.serial));
  assert.equal(pages[0]?.body.subarray(0, 8).toString('latin1'), 'OpusHead');
  assert.match(pages[1]?.body.toString('latin1') ?? '', /OpusTags.*VOICE=voice-a/s);
  assert.deepEqual((await run('voice-a')).ogg, first.ogg);
  assert.notDeepEqual((await run('voice-b')).ogg, first.ogg);
});

test('frames before StartSession, and malformed frames, end the session with SessionFailed 45000001', async () => {
  const early = await exchange([audio(320)]);
  const malformed = await exchange([Buffer.from('0a05', 'hex')]);
  const failed = (message: string) => [{ response_meta: { SessionID: '', Sequence: 1, StatusCode: 45000001, Message: message }, event: 153 }];
  assert.deepEqual(
    [early.responses, early.closeCode, malformed.responses],
    [failed('event 200 before StartSession (100)'), 1000, failed('malformed TranslateRequest: length-delimited field runs past the end')],
  );
});

test('a StartSession with the wrong source audio is refused with SessionFailed naming the field', async () => {
  const wrongRate = encodeTranslateRequest({ event: 100, source_audio: { ...SOURCE, rate: 8000 }, request: { mode: 's2t' } });
  const { responses } = await exchange([wrongRate]);
  assert.deepEqual(
    responses.map((r) => [r.event, r.response_meta?.Message]),
    [[153, 'source_audio.rate: expected 16000, got 8000']],
  );
});

test('a connection without the app key, access key and resource id headers is refused with 401', async () => {
  const { 'X-Api-Access-Key': _omitted, ...withoutAccessKey } = HEADERS;
  assert.deepEqual(await refusedUpgrade(withoutAccessKey), { status: 401, body: { code: 45000000, message: 'missing header: x-api-access-key' } });
});

test('other paths are refused with 404', async () => {
  const { status } = await refusedUpgrade(HEADERS, '/api/v3/other');
  assert.equal(status, 404);
});

test('a status fault refuses the upgrade with that status', async () => {
  await addFault(sandbox.url, { kind: 'ast', status: 503 });
  assert.deepEqual(await refusedUpgrade(HEADERS), { status: 503, body: { code: 55000000, message: 'sandbox fault: status 503' } });
});

test('task_outcome failed ends the session with SessionFailed ServerInternalError right after SessionStarted', async () => {
  await addFault(sandbox.url, { kind: 'ast', task_outcome: 'failed' });
  const { responses } = await exchange([startSession({ mode: 's2t' }), audio(3200), finish()]);
  assert.deepEqual(responses, [
    { response_meta: meta(1), event: 150 },
    { response_meta: meta(2, { StatusCode: 55000000, Message: 'ServerInternalError' }), event: 153 },
  ]);
});

test('drop_after_chunks breaks the connection after that many server frames', async () => {
  await addFault(sandbox.url, { kind: 'ast', drop_after_chunks: 3 });
  const { responses, closeCode } = await exchange([startSession({ mode: 's2t' }), audio(3200), finish()]);
  assert.deepEqual([responses.map((r) => r.event), closeCode], [[150, 651, 652], 1006]);
});

test('closing the sandbox cuts a hanging upgrade', async () => {
  const own = await startSandbox({ port: 0 });
  await addFault(own.url, { kind: 'ast', hang: true });
  const ws = new WebSocket(`${own.url.replace('http://', 'ws://')}${AST_PATH}`, { headers: HEADERS });
  const failed = once(ws, 'error');
  await pollUntil(async () => (await loggedRequests(own.url))[0]);
  await own.close();
  await failed;
});

interface OggPageRead {
  headerType: number;
  granule: bigint;
  serial: number;
  sequence: number;
  crcMatches: boolean;
  body: Buffer;
}

/** Reads Ogg pages back to back, checking each one's capture pattern, version and CRC. */
function oggPages(file: Buffer): OggPageRead[] {
  const pages: OggPageRead[] = [];
  for (let at = 0; at < file.length; ) {
    assert.equal(file.subarray(at, at + 4).toString('latin1'), 'OggS', `capture pattern at ${at}`);
    assert.equal(file[at + 4], 0, 'stream structure version');
    const segments = file[at + 26] as number;
    const lacing = file.subarray(at + 27, at + 27 + segments);
    const length = 27 + segments + lacing.reduce((sum, n) => sum + n, 0);
    const page = Buffer.from(file.subarray(at, at + length));
    const crc = page.readUInt32LE(22);
    page.writeUInt32LE(0, 22);
    pages.push({
      headerType: page[5] as number,
      granule: page.readBigUInt64LE(6),
      serial: page.readUInt32LE(14),
      sequence: page.readUInt32LE(18),
      crcMatches: crc === bitwiseOggCrc(page),
      body: page.subarray(27 + segments),
    });
    at += length;
  }
  return pages;
}

/** CRC-32 with polynomial 0x04c11db7, MSB first, initial 0, no final xor: bit by bit, unlike the sandbox's table. */
function bitwiseOggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? ((crc << 1) ^ 0x04c11db7) >>> 0 : (crc << 1) >>> 0;
  }
  return crc >>> 0;
}
