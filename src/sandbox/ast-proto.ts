// The protobuf messages of AST 2.0 speech translation (volcengine-formats.md §4.2), by hand: varints,
// length-delimited strings, bytes and nested messages are all these frames use. Field numbers marked OURS
// are not Volcengine's but this project's; the gateway's codec uses the same.
//
// Decoding keeps only the fields present on the wire, so an absent field reads as undefined: proto3's
// default (0, '') is the caller's `?? 0`. Unknown fields are skipped, as any protobuf parser does.

export const AST_EVENTS = {
  StartSession: 100,
  FinishSession: 102,
  SessionStarted: 150,
  SessionCanceled: 151,
  SessionFinished: 152,
  SessionFailed: 153,
  UsageResponse: 154,
  TaskRequest: 200,
  UpdateConfig: 201,
  TTSResponse: 352,
  SourceSubtitleResponse: 651,
  SourceSubtitleEnd: 652,
  TranslationSubtitleResponse: 654,
  TranslationSubtitleEnd: 655,
} as const;

export interface RequestMeta {
  Endpoint?: string;
  AppKey?: string;
  AppID?: string;
  ResourceID?: string;
  ConnectionID?: string;
  SessionID?: string;
  Sequence?: number;
}

export interface User {
  uid?: string;
  did?: string;
}

export interface Audio {
  format?: string;
  codec?: string;
  rate?: number;
  bits?: number;
  channel?: number;
  binary_data?: Uint8Array;
}

export interface ReqParams {
  mode?: string;
  source_language?: string;
  target_language?: string;
  voice?: string;
}

export interface TranslateRequest {
  request_meta?: RequestMeta;
  event?: number;
  user?: User;
  source_audio?: Audio;
  target_audio?: Audio;
  request?: ReqParams;
}

export interface Billing {
  duration_ms?: number;
  input_tokens?: number;
  output_tokens?: number;
}

export interface ResponseMeta {
  SessionID?: string;
  Sequence?: number;
  StatusCode?: number;
  Message?: string;
  billing?: Billing;
}

export interface TranslateResponse {
  response_meta?: ResponseMeta;
  event?: number;
  data?: Uint8Array;
  text?: string;
}

export class ProtoDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtoDecodeError';
  }
}

type FieldType = 'string' | 'int32' | 'bytes' | Schema;
interface Field {
  readonly name: string;
  readonly type: FieldType;
}
/** Fields by number, as the .proto file lists them. */
type Schema = ReadonlyMap<number, Field>;

const schema = (fields: Record<number, [string, FieldType]>): Schema =>
  new Map(Object.entries(fields).map(([number, [name, type]]) => [Number(number), { name, type }]));

const REQUEST_META = schema({
  1: ['Endpoint', 'string'],
  2: ['AppKey', 'string'],
  3: ['AppID', 'string'],
  4: ['ResourceID', 'string'],
  5: ['ConnectionID', 'string'],
  6: ['SessionID', 'string'],
  7: ['Sequence', 'int32'],
});
const USER = schema({ 1: ['uid', 'string'], 2: ['did', 'string'] });
const AUDIO = schema({
  4: ['format', 'string'],
  5: ['codec', 'string'],
  7: ['rate', 'int32'],
  8: ['bits', 'int32'],
  9: ['channel', 'int32'],
  14: ['binary_data', 'bytes'],
});
const REQ_PARAMS = schema({
  1: ['mode', 'string'],
  2: ['source_language', 'string'],
  3: ['target_language', 'string'],
  4: ['voice', 'string'], // OURS
});
const TRANSLATE_REQUEST = schema({
  1: ['request_meta', REQUEST_META],
  2: ['event', 'int32'],
  3: ['user', USER],
  4: ['source_audio', AUDIO],
  5: ['target_audio', AUDIO],
  6: ['request', REQ_PARAMS],
});
const BILLING = schema({ 1: ['duration_ms', 'int32'], 2: ['input_tokens', 'int32'], 3: ['output_tokens', 'int32'] }); // OURS
const RESPONSE_META = schema({
  1: ['SessionID', 'string'],
  2: ['Sequence', 'int32'],
  3: ['StatusCode', 'int32'],
  4: ['Message', 'string'],
  7: ['billing', BILLING], // OURS
});
const TRANSLATE_RESPONSE = schema({
  1: ['response_meta', RESPONSE_META],
  2: ['event', 'int32'],
  3: ['data', 'bytes'],
  4: ['text', 'string'],
});

export const encodeTranslateRequest = (message: TranslateRequest): Buffer => encodeMessage(TRANSLATE_REQUEST, message);
export const decodeTranslateRequest = (bytes: Uint8Array): TranslateRequest => decodeMessage(TRANSLATE_REQUEST, bytes);
export const encodeTranslateResponse = (message: TranslateResponse): Buffer => encodeMessage(TRANSLATE_RESPONSE, message);
export const decodeTranslateResponse = (bytes: Uint8Array): TranslateResponse => decodeMessage(TRANSLATE_RESPONSE, bytes);

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH = 2;
const WIRE_FIXED32 = 5;

/** Writes every field that is set, zeros included (proto3 readers take an explicit 0 as the default it is). */
function encodeMessage(fields: Schema, message: object): Buffer {
  const values = message as Record<string, unknown>;
  const parts: Uint8Array[] = [];
  for (const [number, { name, type }] of fields) {
    const value = values[name];
    if (value === undefined || value === null) continue;
    if (type === 'int32') {
      parts.push(varint((number << 3) | WIRE_VARINT), varint(value as number));
      continue;
    }
    const payload = type === 'string' ? Buffer.from(value as string, 'utf8') : type === 'bytes' ? (value as Uint8Array) : encodeMessage(type, value as object);
    parts.push(varint((number << 3) | WIRE_LENGTH), varint(payload.length), payload);
  }
  return Buffer.concat(parts);
}

/** Base-128 varint; a negative int32 goes out sign-extended to ten bytes, as protobuf requires. */
function varint(value: number): Buffer {
  let rest = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest === 0n ? low : low | 0x80);
  } while (rest !== 0n);
  return Buffer.from(bytes);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decodeMessage<T>(fields: Schema, bytes: Uint8Array): T {
  const reader = new Reader(bytes);
  const message: Record<string, unknown> = {};
  while (!reader.done) {
    const key = reader.varint();
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (number === 0 || number > 0x1fffffff) throw new ProtoDecodeError(`invalid field number ${number}`);
    const field = fields.get(number);
    if (!field) {
      reader.skip(wire);
      continue;
    }
    const expected = field.type === 'int32' ? WIRE_VARINT : WIRE_LENGTH;
    if (wire !== expected) throw new ProtoDecodeError(`${field.name} (field ${number}): wire type ${wire}, expected ${expected}`);
    if (field.type === 'int32') {
      message[field.name] = Number(BigInt.asIntN(32, reader.varint()));
      continue;
    }
    const payload = reader.lengthDelimited();
    if (field.type === 'bytes')
      message[field.name] = Buffer.from(payload); // a copy: the frame's buffer is not kept
    else if (field.type === 'string') message[field.name] = decodeString(payload, field.name);
    // a message field seen twice is merged, as protobuf does
    else message[field.name] = { ...(message[field.name] as object | undefined), ...decodeMessage<object>(field.type, payload) };
  }
  return message as T;
}

function decodeString(payload: Uint8Array, name: string): string {
  try {
    return UTF8.decode(payload);
  } catch {
    throw new ProtoDecodeError(`${name}: not valid UTF-8`);
  }
}

class Reader {
  private at = 0;

  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.at >= this.bytes.length;
  }

  varint(): bigint {
    let value = 0n;
    for (let i = 0; i < 10; i++) {
      const byte = this.bytes[this.at++];
      if (byte === undefined) throw new ProtoDecodeError('truncated varint');
      value |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if ((byte & 0x80) === 0) return BigInt.asUintN(64, value);
    }
    throw new ProtoDecodeError('varint longer than 10 bytes');
  }

  lengthDelimited(): Uint8Array {
    const length = this.varint();
    if (length > BigInt(this.bytes.length - this.at)) throw new ProtoDecodeError('length-delimited field runs past the end');
    const start = this.at;
    this.at += Number(length);
    return this.bytes.subarray(start, this.at);
  }

  skip(wire: number): void {
    if (wire === WIRE_VARINT) this.varint();
    else if (wire === WIRE_LENGTH) this.lengthDelimited();
    else if (wire === WIRE_FIXED64 || wire === WIRE_FIXED32) {
      this.at += wire === WIRE_FIXED64 ? 8 : 4;
      if (this.at > this.bytes.length) throw new ProtoDecodeError('fixed-width field runs past the end');
    } else throw new ProtoDecodeError(`unsupported wire type ${wire}`);
  }
}
