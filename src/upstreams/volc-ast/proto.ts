// AST 2.0 protobuf messages (volcengine-formats §4.2), hand-rolled: one WebSocket binary message is one
// TranslateRequest or TranslateResponse. Proto3 rules: default values are not written, missing scalars
// read as their default, unknown fields (and known fields of an unexpected wire type) are skipped.

/**
 * Every field number, in one place. The §4.2 numbers are reconstructed (🟡); those marked OURS are our
 * own decision, shared with the sandbox. Correct them here and nowhere else.
 */
export const FIELD = {
  TranslateRequest: { request_meta: 1, event: 2, user: 3, source_audio: 4, target_audio: 5, request: 6 },
  RequestMeta: { Endpoint: 1, AppKey: 2, AppID: 3, ResourceID: 4, ConnectionID: 5, SessionID: 6, Sequence: 7 },
  User: { uid: 1, did: 2 },
  Audio: { format: 4, codec: 5, rate: 7, bits: 8, channel: 9, binary_data: 14 },
  ReqParams: { mode: 1, source_language: 2, target_language: 3, voice: 4 /* OURS */ },
  TranslateResponse: { response_meta: 1, event: 2, data: 3, text: 4 },
  ResponseMeta: { SessionID: 1, Sequence: 2, StatusCode: 3, Message: 4, billing: 7 /* OURS */ },
  Billing: { duration_ms: 1, input_tokens: 2, output_tokens: 3 } /* OURS */,
} as const;

/** `TranslateRequest.event` / `TranslateResponse.event` values. */
export const EVENT = {
  StartSession: 100,
  FinishSession: 102,
  TaskRequest: 200,
  SessionStarted: 150,
  SessionCanceled: 151,
  SessionFinished: 152,
  SessionFailed: 153,
  UsageResponse: 154,
  TTSResponse: 352,
  SourceSubtitleStart: 650,
  SourceSubtitleResponse: 651,
  SourceSubtitleEnd: 652,
  TranslationSubtitleStart: 653,
  TranslationSubtitleResponse: 654,
  TranslationSubtitleEnd: 655,
} as const;

// ---- message shapes, as decoded (scalars always present, sub-messages only when sent) ----

export interface RequestMeta {
  Endpoint: string;
  AppKey: string;
  AppID: string;
  ResourceID: string;
  ConnectionID: string;
  SessionID: string;
  Sequence: number;
}
export interface User {
  uid: string;
  did: string;
}
export interface Audio {
  format: string;
  codec: string;
  rate: number;
  bits: number;
  channel: number;
  binary_data: Buffer;
}
export interface ReqParams {
  mode: string;
  source_language: string;
  target_language: string;
  voice: string;
}
export interface TranslateRequest {
  request_meta?: RequestMeta;
  event: number;
  user?: User;
  source_audio?: Audio;
  target_audio?: Audio;
  request?: ReqParams;
}
export interface Billing {
  duration_ms: number;
  input_tokens: number;
  output_tokens: number;
}
export interface ResponseMeta {
  SessionID: string;
  Sequence: number;
  StatusCode: number;
  Message: string;
  billing?: Billing;
}
export interface TranslateResponse {
  response_meta?: ResponseMeta;
  event: number;
  data: Buffer;
  text: string;
}

/** What an encoder takes: any field may be left out, at any depth. */
export type MessageInit<T> = {
  [K in keyof T]?: NonNullable<T[K]> extends string | number | Uint8Array ? T[K] : MessageInit<NonNullable<T[K]>>;
};

// ---- schemas: field names to numbers (from FIELD) and types ----

type ScalarType = 'string' | 'int32' | 'bytes';
interface FieldSpec {
  name: string;
  no: number;
  type: ScalarType | MessageSpec;
}
type MessageSpec = readonly FieldSpec[];

function spec<N extends Record<string, number>>(numbers: N, types: { [K in keyof N]: ScalarType | MessageSpec }): MessageSpec {
  return Object.keys(numbers)
    .map((name) => ({ name, no: numbers[name] as number, type: types[name] as ScalarType | MessageSpec }))
    .sort((a, b) => a.no - b.no);
}

const S = 'string';
const I = 'int32';
const B = 'bytes';
const RequestMetaSpec = spec(FIELD.RequestMeta, { Endpoint: S, AppKey: S, AppID: S, ResourceID: S, ConnectionID: S, SessionID: S, Sequence: I });
const UserSpec = spec(FIELD.User, { uid: S, did: S });
const AudioSpec = spec(FIELD.Audio, { format: S, codec: S, rate: I, bits: I, channel: I, binary_data: B });
const ReqParamsSpec = spec(FIELD.ReqParams, { mode: S, source_language: S, target_language: S, voice: S });
const TranslateRequestSpec = spec(FIELD.TranslateRequest, {
  request_meta: RequestMetaSpec,
  event: I,
  user: UserSpec,
  source_audio: AudioSpec,
  target_audio: AudioSpec,
  request: ReqParamsSpec,
});
const BillingSpec = spec(FIELD.Billing, { duration_ms: I, input_tokens: I, output_tokens: I });
const ResponseMetaSpec = spec(FIELD.ResponseMeta, { SessionID: S, Sequence: I, StatusCode: I, Message: S, billing: BillingSpec });
const TranslateResponseSpec = spec(FIELD.TranslateResponse, { response_meta: ResponseMetaSpec, event: I, data: B, text: S });

export const encodeTranslateRequest = (message: MessageInit<TranslateRequest>): Buffer => encode(TranslateRequestSpec, message);
export const decodeTranslateRequest = (bytes: Uint8Array): TranslateRequest => decode(TranslateRequestSpec, bytes) as unknown as TranslateRequest;
export const encodeTranslateResponse = (message: MessageInit<TranslateResponse>): Buffer => encode(TranslateResponseSpec, message);
export const decodeTranslateResponse = (bytes: Uint8Array): TranslateResponse => decode(TranslateResponseSpec, bytes) as unknown as TranslateResponse;

// ---- wire ----

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_SGROUP = 3;
const WIRE_EGROUP = 4;
const WIRE_I32 = 5;

export class ProtoDecodeError extends Error {
  override name = 'ProtoDecodeError';
}

function encode(schema: MessageSpec, message: object): Buffer {
  const values = message as Record<string, unknown>;
  const parts: Buffer[] = [];
  for (const field of schema) {
    const value = values[field.name];
    if (value === undefined || value === null) continue;
    if (field.type === 'string') {
      if (typeof value !== 'string') throw new TypeError(`${field.name}: expected a string`);
      if (value !== '') parts.push(tag(field.no, WIRE_LEN), lengthDelimited(Buffer.from(value, 'utf8')));
    } else if (field.type === 'int32') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) {
        throw new TypeError(`${field.name}: expected an int32`);
      }
      // negative int32 is sign-extended to 64 bits on the wire, as protoc does: ten bytes
      if (value !== 0) parts.push(tag(field.no, WIRE_VARINT), varint(value >>> 0, value < 0 ? 0xffffffff : 0));
    } else if (field.type === 'bytes') {
      if (!(value instanceof Uint8Array)) throw new TypeError(`${field.name}: expected bytes`);
      if (value.length > 0) parts.push(tag(field.no, WIRE_LEN), lengthDelimited(value));
    } else {
      // a sub-message that is set is written even when empty: presence is meaningful for messages
      parts.push(tag(field.no, WIRE_LEN), lengthDelimited(encode(field.type, value as object)));
    }
  }
  return Buffer.concat(parts);
}

const tag = (no: number, wire: number) => varint(((no << 3) | wire) >>> 0, 0);

function lengthDelimited(bytes: Uint8Array): Buffer {
  return Buffer.concat([varint(bytes.length, 0), bytes]);
}

/** A base-128 varint of the 64-bit value hi:lo (both unsigned 32-bit). */
function varint(lo: number, hi: number): Buffer {
  const out: number[] = [];
  while (hi !== 0 || lo > 0x7f) {
    out.push((lo & 0x7f) | 0x80);
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi = hi >>> 7;
  }
  out.push(lo);
  return Buffer.from(out);
}

interface Reader {
  bytes: Uint8Array;
  pos: number;
  end: number;
}

function decode(schema: MessageSpec, bytes: Uint8Array): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // A sub-message may arrive in several pieces; protobuf merges them, which decoding their concatenation does.
  const pieces = new Map<FieldSpec, Uint8Array[]>();
  for (const field of schema) {
    if (field.type === 'string') out[field.name] = '';
    else if (field.type === 'int32') out[field.name] = 0;
    else if (field.type === 'bytes') out[field.name] = Buffer.alloc(0);
  }
  const reader: Reader = { bytes, pos: 0, end: bytes.length };
  while (reader.pos < reader.end) {
    const key = readVarint(reader);
    if (key.hi !== 0) throw new ProtoDecodeError('field number out of range');
    const no = key.lo >>> 3;
    const wire = key.lo & 7;
    if (no === 0) throw new ProtoDecodeError('field number 0');
    const field = schema.find((f) => f.no === no);
    const expected = field === undefined ? undefined : field.type === 'int32' ? WIRE_VARINT : WIRE_LEN;
    if (field === undefined || wire !== expected) {
      skipField(reader, no, wire);
      continue;
    }
    if (field.type === 'int32') {
      out[field.name] = readVarint(reader).lo | 0; // int32 keeps the low 32 bits of the (sign-extended) varint
      continue;
    }
    const length = readLength(reader);
    const body = bytes.subarray(reader.pos, reader.pos + length);
    reader.pos += length;
    if (field.type === 'string') out[field.name] = Buffer.from(body).toString('utf8');
    else if (field.type === 'bytes')
      out[field.name] = Buffer.from(body); // a copy: the caller may reuse its buffer
    else pieces.set(field, [...(pieces.get(field) ?? []), body]);
  }
  for (const [field, parts] of pieces) out[field.name] = decode(field.type as MessageSpec, Buffer.concat(parts));
  return out;
}

function readVarint(reader: Reader): { lo: number; hi: number } {
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < 10; i++) {
    if (reader.pos >= reader.end) throw new ProtoDecodeError('truncated varint');
    const byte = reader.bytes[reader.pos++] as number;
    if (i < 4) lo |= (byte & 0x7f) << (7 * i);
    else if (i === 4) {
      lo |= (byte & 0x0f) << 28;
      hi = (byte & 0x7f) >>> 4;
    } else hi |= (byte & 0x7f) << (7 * i - 32);
    if ((byte & 0x80) === 0) return { lo: lo >>> 0, hi: hi >>> 0 };
  }
  throw new ProtoDecodeError('varint longer than 10 bytes');
}

function readLength(reader: Reader): number {
  const { lo, hi } = readVarint(reader);
  if (hi !== 0 || lo > reader.end - reader.pos) throw new ProtoDecodeError('length-delimited field runs past the end');
  return lo;
}

function skipField(reader: Reader, no: number, wire: number): void {
  if (wire === WIRE_VARINT) readVarint(reader);
  else if (wire === WIRE_I64) advance(reader, 8);
  else if (wire === WIRE_LEN) advance(reader, readLength(reader));
  else if (wire === WIRE_I32) advance(reader, 4);
  else if (wire === WIRE_SGROUP) {
    for (;;) {
      if (reader.pos >= reader.end) throw new ProtoDecodeError('unterminated group');
      const key = readVarint(reader);
      const innerNo = key.lo >>> 3;
      const innerWire = key.lo & 7;
      if (innerWire === WIRE_EGROUP) {
        if (innerNo !== no) throw new ProtoDecodeError('mismatched end of group');
        return;
      }
      skipField(reader, innerNo, innerWire);
    }
  } else throw new ProtoDecodeError(`unexpected wire type ${wire}`);
}

function advance(reader: Reader, count: number): void {
  if (count > reader.end - reader.pos) throw new ProtoDecodeError('field runs past the end');
  reader.pos += count;
}
