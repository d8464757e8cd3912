// Multipart uploads made invalid: /v1/audio/translations and /v1/files with a boundary missing,
// lying or cut short, parts past the limits, unknown or misnamed parts, and WAV files whose
// header lies about its size, format, rate, channels or sample size. Always a 4xx in the error
// shape naming what is wrong; never a 5xx, a hold or a charge.
import fc from 'fast-check';
import { makeWav } from '../helpers/wav.js';
import { type Expect, type Probe, type PropertySpec, probe, UPLOAD_LIMIT_BYTES } from './harness.js';
import { modelOfAnotherType, unknownModel } from './values.js';

interface Part {
  name: string;
  filename?: string;
  data: Buffer | string;
}

const CRLF = '\r\n';
function form(boundary: string, parts: readonly Part[], { close = true } = {}): Buffer {
  const chunks = parts.flatMap((p) => [
    Buffer.from(
      `--${boundary}${CRLF}Content-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}${CRLF}${p.filename ? `Content-Type: audio/wav${CRLF}` : ''}${CRLF}`,
    ),
    Buffer.from(p.data),
    Buffer.from(CRLF),
  ]);
  return Buffer.concat([...chunks, Buffer.from(close ? `--${boundary}--${CRLF}` : '')]);
}

const WAV = makeWav({ ms: 200 }); // 16 kHz mono 16-bit: what the route takes
const at = (bytes: Buffer, offset: number, write: (b: Buffer) => void) => {
  const copy = Buffer.from(bytes);
  write(copy.subarray(offset));
  return copy;
};

const chunkHeader = (id: string, size: number) => {
  const header = Buffer.alloc(8, id, 'latin1');
  header.writeUInt32LE(size, 4);
  return header;
};

/** A WAV the translation route must refuse: each lie makes it unusable, whatever the RIFF size claims beside it. */
const lyingWav: fc.Arbitrary<{ kind: string; wav: Buffer }> = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: 0, max: 44 }).map((n) => ({ kind: `cut to ${n} bytes`, wav: WAV.subarray(0, n) })),
      fc.constantFrom(0, 8).chain((offset) =>
        fc
          .uint8Array({ minLength: 4, maxLength: 4 })
          .filter((b) => !['RIFF', 'WAVE'].includes(Buffer.from(b).toString('latin1')))
          .map((magic) => ({ kind: `magic at ${offset}`, wav: at(WAV, offset, (b) => b.set(magic)) })),
      ),
      fc.integer({ min: 0, max: 15 }).map((size) => ({ kind: `fmt size ${size}`, wav: at(WAV, 16, (b) => b.writeUInt32LE(size)) })),
      fc
        .integer({ min: WAV.length, max: 0xffffffff })
        .map((size) => ({ kind: `fmt size ${size} past the end`, wav: at(WAV, 16, (b) => b.writeUInt32LE(size)) })),
      fc
        .integer({ min: 0, max: 0xffff })
        .filter((f) => f !== 1)
        .map((format) => ({ kind: `format ${format}`, wav: at(WAV, 20, (b) => b.writeUInt16LE(format)) })),
      fc
        .integer({ min: 0, max: 0xffff })
        .filter((c) => c !== 1)
        .map((channels) => ({ kind: `${channels} channels`, wav: at(WAV, 22, (b) => b.writeUInt16LE(channels)) })),
      fc
        .integer({ min: 0, max: 0xffffffff })
        .filter((r) => r !== 16_000)
        .map((rate) => ({ kind: `${rate} Hz`, wav: at(WAV, 24, (b) => b.writeUInt32LE(rate)) })),
      fc
        .integer({ min: 0, max: 0xffff })
        .filter((bits) => bits !== 16)
        .map((bits) => ({ kind: `${bits} bits`, wav: at(WAV, 34, (b) => b.writeUInt16LE(bits)) })),
      fc.constant({ kind: 'data size 0', wav: at(WAV, 40, (b) => b.writeUInt32LE(0)) }),
      fc
        .integer({ min: 1, max: 0xffffffff })
        .map((size) => ({ kind: `data header says ${size}, no data`, wav: at(WAV.subarray(0, 44), 40, (b) => b.writeUInt32LE(size)) })),
      fc
        .integer({ min: WAV.length, max: 0xffffffff })
        .map((size) => ({ kind: `LIST chunk of ${size} before fmt`, wav: Buffer.concat([WAV.subarray(0, 12), chunkHeader('LIST', size), WAV.subarray(12)]) })),
      fc
        .uint8Array({ minLength: 1, maxLength: 2000 })
        .filter((b) => Buffer.from(b).toString('latin1', 0, 4) !== 'RIFF')
        .map((b) => ({ kind: 'not a WAV', wav: Buffer.from(b) })),
    ),
    fc.option(fc.integer({ min: 0, max: 0xffffffff })),
  )
  .map(([{ kind, wav }, riffSize]) =>
    riffSize === null || wav.length < 8 ? { kind, wav } : { kind: `${kind}, RIFF size ${riffSize}`, wav: at(wav, 4, (b) => b.writeUInt32LE(riffSize)) },
  );

interface FormMutation {
  kind: string;
  parts: readonly Part[];
  expect: Expect;
  /** The Content-Type's boundary when it lies about the body's, or null for none at all. */
  boundary?: string | null;
  contentType?: string;
  cut?: boolean;
}

const file = (data: Buffer = WAV, name = 'file'): Part => ({ name, filename: 'speech.wav', data });
const fieldName = fc.stringMatching(/^[a-z_][a-z0-9_-]{0,15}$/);
const TRANSLATION_FIELDS = ['model', 'mode', 'source_language', 'target_language', 'voice', 'file'];

const translationForms: fc.Arbitrary<FormMutation> = fc.oneof(
  lyingWav.map(({ kind, wav }) => ({ kind: `WAV ${kind}`, parts: [{ name: 'model', data: 'sandbox-ast' }, file(wav)], expect: { names: ['file'] } })),
  fc.constant({ kind: 'no model', parts: [file()], expect: { exact: ['model field is required'] } }),
  fc.constant({ kind: 'empty model', parts: [{ name: 'model', data: '' }, file()], expect: { exact: ['model field is required'] } }),
  fc
    .oneof(unknownModel, modelOfAnotherType('ast'))
    .map((model) => ({ kind: `model ${model}`, parts: [{ name: 'model', data: model }, file()], expect: { names: ['model'] } })),
  fc
    .string({ maxLength: 10 })
    .filter((m) => m !== 's2t' && m !== 's2s')
    .map((mode) => ({
      kind: `mode ${mode}`,
      parts: [{ name: 'model', data: 'sandbox-ast' }, { name: 'mode', data: mode }, file()],
      expect: { names: ['mode'] },
    })),
  fieldName
    .filter((n) => !TRANSLATION_FIELDS.includes(n))
    .map((name) => ({
      kind: `unknown field ${name}`,
      parts: [{ name: 'model', data: 'sandbox-ast' }, { name, data: 'x' }, file()],
      expect: { names: [name] },
    })),
  fc.constant({ kind: 'no file', parts: [{ name: 'model', data: 'sandbox-ast' }], expect: { names: ['file'] } }),
  fieldName
    .filter((n) => n !== 'file')
    .map((name) => ({ kind: `file as ${name}`, parts: [{ name: 'model', data: 'sandbox-ast' }, file(WAV, name)], expect: { names: [name, 'file'] } })),
  fc.constant({ kind: 'two files', parts: [{ name: 'model', data: 'sandbox-ast' }, file(), file()], expect: { status: [400, 413], names: ['file'] } }),
  fc.integer({ min: 21, max: 40 }).map((n) => ({
    kind: `${n} mode fields`,
    parts: [{ name: 'model', data: 'sandbox-ast' }, ...Array.from({ length: n }, () => ({ name: 'mode', data: 's2t' })), file()],
    expect: { status: [400, 413], names: ['field', 'part', 'limit'] },
  })),
  fc.integer({ min: 1_600, max: 3_000 }).map((ms) => ({
    kind: `${ms} ms WAV past the upload limit`,
    parts: [{ name: 'model', data: 'sandbox-ast' }, file(makeWav({ ms }))],
    expect: { status: [413], names: ['file', 'large'] },
  })),
);

const fileForms: fc.Arbitrary<FormMutation> = fc.oneof(
  fc.constant({ kind: 'no file', parts: [{ name: 'purpose', data: 'minutes' }], expect: { names: ['file'] } }),
  fieldName.filter((n) => n !== 'file').map((name) => ({ kind: `file as ${name}`, parts: [file(WAV, name)], expect: { names: [name, 'file'] } })),
  fc.integer({ min: UPLOAD_LIMIT_BYTES + 1, max: 3 * UPLOAD_LIMIT_BYTES }).map((size) => ({
    kind: `${size} bytes past the upload limit`,
    parts: [file(Buffer.alloc(size, 7))],
    expect: { status: [413], names: ['file', 'large'] },
  })),
);

/** Breaks of the multipart frame itself, on either route: what is wrong is the body, not a field. */
const frameMutations = (valid: readonly Part[]): fc.Arbitrary<FormMutation> => {
  const framing = { names: ['boundary', 'multipart', 'form', 'file', 'model'] };
  return fc.oneof(
    fc.constant({ kind: 'no boundary', parts: valid, boundary: null, expect: { names: ['boundary'] } }),
    fc
      .stringMatching(/^[A-Za-z0-9'()+_,-./:=?]{8,60}$/)
      .filter((b) => b !== 'form-boundary' && !'form-boundary'.startsWith(b))
      .map((boundary) => ({ kind: `boundary ${boundary} lies`, parts: valid, boundary, expect: framing })),
    fc.constant({ kind: 'no closing delimiter', parts: valid, cut: true, expect: framing }),
    fc
      .constantFrom('multipart/mixed; boundary=form-boundary', 'application/json', 'application/octet-stream', 'audio/wav', 'text/plain')
      .map((contentType) => ({ kind: `Content-Type ${contentType}`, parts: valid, contentType, expect: { names: ['Content-Type', 'multipart', 'JSON'] } })),
  );
};

function formProbes(path: string, forms: fc.Arbitrary<FormMutation>, key: string): fc.Arbitrary<Probe> {
  return forms.map((m) => {
    const boundary = m.boundary === undefined ? 'form-boundary' : m.boundary;
    const contentType = m.contentType ?? (boundary === null ? 'multipart/form-data' : `multipart/form-data; boundary=${boundary}`);
    return probe({
      label: `${path} ${m.kind}`,
      method: 'POST',
      path,
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      body: () => form('form-boundary', m.parts, { close: !m.cut }),
      expect: m.expect,
    });
  });
}

// A text field past multipart's field limit (1 MiB): few runs, each sends a megabyte.
const longFields: fc.Arbitrary<FormMutation> = fc
  .tuple(fc.constantFrom('model', 'mode', 'source_language', 'target_language', 'voice'), fc.integer({ min: 1, max: 4096 }))
  .map(([name, over]) => ({
    kind: `${name} of 1 MiB + ${over}`,
    parts: [...(name === 'model' ? [] : [{ name: 'model', data: 'sandbox-ast' }]), { name, data: 'v'.repeat(1024 * 1024 + over) }, file()],
    expect: { status: [413], names: [name] },
  }));

const VALID_TRANSLATION = [{ name: 'model', data: 'sandbox-ast' }, file()];
const PROPERTIES: [string, string, fc.Arbitrary<FormMutation>, number][] = [
  ['translations: one part invalid or a WAV that lies', '/v1/audio/translations', translationForms, 150],
  ['translations: a text field past the field limit', '/v1/audio/translations', longFields, 2],
  ['translations: a broken multipart frame', '/v1/audio/translations', frameMutations(VALID_TRANSLATION), 40],
  ['files: a missing, misnamed or oversized file', '/v1/files', fileForms, 40],
  ['files: a broken multipart frame', '/v1/files', frameMutations([file()]), 40],
];

export const multipartProperties: PropertySpec[] = PROPERTIES.map(([name, path, forms, numRuns]) => ({
  name: `${name} is a 4xx naming it`,
  probes: ({ key }) => formProbes(path, forms, key),
  numRuns,
}));
