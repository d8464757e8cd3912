// The AST 2.0 protobuf codec: field numbers pinned by hand-assembled bytes, not only by round trips.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeTranslateRequest,
  decodeTranslateResponse,
  EVENT,
  encodeTranslateRequest,
  encodeTranslateResponse,
  ProtoDecodeError,
} from '../../../src/upstreams/volc-ast/proto.js';

/** Hex with spaces, `'text'` runs as UTF-8 and `//` comments, so the bytes below read like a protoc dump. */
function bytes(spec: string): Buffer {
  const parts = spec.replace(/\/\/[^\n]*/g, '').match(/'[^']*'|[0-9a-f]{2}/gi) ?? [];
  return Buffer.concat(parts.map((p) => (p.startsWith("'") ? Buffer.from(p.slice(1, -1), 'utf8') : Buffer.from(p, 'hex'))));
}

const emptyMeta = { Endpoint: '', AppKey: '', AppID: '', ResourceID: '', ConnectionID: '', SessionID: '', Sequence: 0 };
const emptyAudio = { format: '', codec: '', rate: 0, bits: 0, channel: 0, binary_data: Buffer.alloc(0) };

test('a StartSession request is written with the §4.2 field numbers, in field order', () => {
  const encoded = encodeTranslateRequest({
    request_meta: { SessionID: 'sess-1' },
    event: EVENT.StartSession,
    user: { uid: 'u', did: 'd' },
    source_audio: { format: 'wav', codec: 'raw', rate: 16_000, bits: 16, channel: 1 },
    target_audio: { format: 'ogg_opus', rate: 24_000 },
    request: { mode: 's2s', source_language: 'zh', target_language: 'en', voice: 'v1' },
  });
  const expected = bytes(`
    0a 08  32 06 'sess-1'  // request_meta(1) { SessionID(6) }
    10 64  // event(2) = 100
    1a 06  0a 01 'u'  12 01 'd'  // user(3) { uid(1) did(2) }
    // source_audio(4) { format(4) codec(5) rate(7)=16000 bits(8)=16 channel(9)=1 }
    22 11  22 03 'wav'  2a 03 'raw'  38 80 7d  40 10  48 01
    2a 0e  22 08 'ogg_opus'  38 c0 bb 01  // target_audio(5) { format(4) rate(7)=24000 }
    // request(6) { mode(1) source_language(2) target_language(3) voice(4) }
    32 11  0a 03 's2s'  12 02 'zh'  1a 02 'en'  22 02 'v1'
  `);
  assert.equal(encoded.toString('hex'), expected.toString('hex'));
});

test('a TaskRequest carries its audio in source_audio.binary_data (field 14)', () => {
  const encoded = encodeTranslateRequest({ request_meta: { SessionID: 's' }, event: EVENT.TaskRequest, source_audio: { binary_data: Buffer.from([1, 2, 3]) } });
  // event 200 is the two-byte varint c8 01; tag of field 14, wire 2 is 0x72
  assert.equal(encoded.toString('hex'), bytes(`0a 03 32 01 's'  10 c8 01  22 05 72 03 01 02 03`).toString('hex'));
});

test('proto3 defaults are not written, and an empty sub-message that is set is kept', () => {
  assert.equal(encodeTranslateRequest({ event: 0, user: {}, request: { mode: '' } }).toString('hex'), '1a00' + '3200');
});

test('a response is read by field number, unknown fields of every wire type skipped', () => {
  const wire = bytes(`
    0a 15
      0a 02 'ab'  // SessionID(1)
      10 05  // Sequence(2)
      28 01  // unknown varint 5
      22 02 'ok'  // Message(4)
      3a 07 08 e8 07 10 0c 18 22  // billing(7) { duration_ms(1)=1000 input_tokens(2)=12 output_tokens(3)=34 }
    10 9a 01  // event(2) = 154
    49 01 02 03 04 05 06 07 08  // unknown fixed64 9
    55 01 02 03 04  // unknown fixed32 10
    5a 03 'xyz'  // unknown length-delimited 11
    63 08 01 64  // unknown group 12 holding a varint
    a0 01 01  // unknown varint 20
    22 05 'hello'  // text(4)
    1a 03 01 02 03  // data(3)
  `);
  assert.deepEqual(decodeTranslateResponse(wire), {
    response_meta: { SessionID: 'ab', Sequence: 5, StatusCode: 0, Message: 'ok', billing: { duration_ms: 1000, input_tokens: 12, output_tokens: 34 } },
    event: 154,
    data: Buffer.from([1, 2, 3]),
    text: 'hello',
  });
});

test('a known field sent with an unexpected wire type is skipped like an unknown one', () => {
  // event(2) as a length-delimited field, then the real event as a varint
  assert.deepEqual(decodeTranslateResponse(bytes(`12 01 'x'  10 98 01`)), { event: 152, data: Buffer.alloc(0), text: '' });
});

test('missing fields read as proto3 defaults and absent sub-messages stay absent', () => {
  assert.deepEqual(decodeTranslateResponse(Buffer.alloc(0)), { event: 0, data: Buffer.alloc(0), text: '' });
  assert.deepEqual(decodeTranslateRequest(bytes('0a 00')), { request_meta: emptyMeta, event: 0 });
});

test('a sub-message sent in two pieces is merged, as protobuf requires', () => {
  const wire = bytes(`0a 04 32 02 'id'  0a 02 38 07`); // request_meta { SessionID } then request_meta { Sequence }
  assert.deepEqual(decodeTranslateRequest(wire).request_meta, { ...emptyMeta, SessionID: 'id', Sequence: 7 });
});

test('a negative int32 takes ten bytes on the wire and reads back', () => {
  const encoded = encodeTranslateResponse({ response_meta: { StatusCode: -1 } });
  assert.equal(encoded.toString('hex'), '0a0b' + '18' + 'ffffffffffffffffff01');
  assert.equal(decodeTranslateResponse(encoded).response_meta?.StatusCode, -1);
});

test('every request field survives a round trip', () => {
  const request = {
    request_meta: { Endpoint: 'e', AppKey: 'k', AppID: 'a', ResourceID: 'r', ConnectionID: 'c', SessionID: 's', Sequence: 2_000_000_000 },
    event: EVENT.TaskRequest,
    user: { uid: 'uid-é', did: 'did' },
    source_audio: { format: 'wav', codec: 'raw', rate: 16_000, bits: 16, channel: 1, binary_data: Buffer.from('pcm') },
    target_audio: { ...emptyAudio, format: 'ogg_opus', rate: 24_000 },
    request: { mode: 's2t', source_language: 'zh', target_language: 'en', voice: '' },
  };
  assert.deepEqual(decodeTranslateRequest(encodeTranslateRequest(request)), request);
});

test('every response field survives a round trip', () => {
  const response = {
    response_meta: { SessionID: 's', Sequence: 9, StatusCode: 20_000_000, Message: '完成', billing: { duration_ms: 1, input_tokens: 2, output_tokens: 3 } },
    event: EVENT.TTSResponse,
    data: Buffer.from([0x4f, 0x67, 0x67, 0x53]),
    text: 'text',
  };
  assert.deepEqual(decodeTranslateResponse(encodeTranslateResponse(response)), response);
});

test('truncated or malformed bytes are refused with a ProtoDecodeError', () => {
  for (const wire of ['0a 05 32', '10', '10 ff ff ff ff ff ff ff ff ff ff 01', '63 08 01', '0c', '00 01', '49 01 02']) {
    assert.throws(() => decodeTranslateResponse(bytes(wire)), ProtoDecodeError, wire);
  }
});

test('a value of the wrong type is refused when encoding', () => {
  assert.throws(() => encodeTranslateRequest({ event: 1.5 }), /event: expected an int32/);
  assert.throws(() => encodeTranslateRequest({ event: 2 ** 31 }), /event: expected an int32/);
});
