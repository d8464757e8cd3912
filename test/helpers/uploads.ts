// Multipart uploads of any size, generated as they are sent (never whole in memory), and a client
// that notices an answer arriving before its body is all sent (then stops sending).
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';

export type Part = { name: string; value: string } | { name: string; filename: string; contentType: string; head?: Buffer; bytes: number };

const CRLF = '\r\n';
const FILL = Buffer.alloc(64 * 1024, 0x11);

/** A 16 kHz mono 16-bit PCM WAV header for `dataBytes` of samples (which the caller sends after it). */
export function wavHeader(dataBytes: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** A WAV file part of `seconds` of audio, its samples generated while sending. */
export const wavPart = (seconds: number, name = 'file'): Part => {
  const dataBytes = seconds * 32_000;
  return { name, filename: 'speech.wav', contentType: 'audio/wav', head: wavHeader(dataBytes), bytes: 44 + dataBytes };
};

export function multipart(parts: Part[]): { contentType: string; length: number; body(): Readable } {
  const boundary = `----tollroute${randomBytes(8).toString('hex')}`;
  const pieces = parts.map((part) => {
    const disposition =
      'filename' in part
        ? `Content-Disposition: form-data; name="${part.name}"; filename="${part.filename}"${CRLF}Content-Type: ${part.contentType}`
        : `Content-Disposition: form-data; name="${part.name}"`;
    return { open: Buffer.from(`--${boundary}${CRLF}${disposition}${CRLF}${CRLF}`), part };
  });
  const close = Buffer.from(`--${boundary}--${CRLF}`);
  const sizeOf = (part: Part) => ('filename' in part ? part.bytes : Buffer.byteLength(part.value));
  const length = pieces.reduce((sum, { open, part }) => sum + open.length + sizeOf(part) + 2, 0) + close.length;
  async function* generate() {
    for (const { open, part } of pieces) {
      yield open;
      if ('filename' in part) {
        const head = part.head ?? Buffer.alloc(0);
        yield head;
        for (let left = part.bytes - head.length; left > 0; left -= FILL.length) yield left >= FILL.length ? FILL : FILL.subarray(0, left);
      } else {
        yield Buffer.from(part.value);
      }
      yield Buffer.from(CRLF);
    }
    yield close;
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, length, body: () => Readable.from(generate(), { objectMode: false }) };
}

export interface UploadAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
  /** Bytes of the request body written when the answer's headers arrived, and in all. */
  sentBeforeAnswer: number;
  length: number;
}

/**
 * POSTs the parts, streaming them with backpressure; stops sending once an answer arrives (a
 * server that answers early and closes the connection is not an error here).
 */
export function postUpload(url: string, parts: Part[], headers: Record<string, string> = {}): Promise<UploadAnswer> {
  const form = multipart(parts);
  return new Promise<UploadAnswer>((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-type': form.contentType, 'content-length': String(form.length) } });
    let sent = 0;
    let answered = false;
    let wake: (() => void) | undefined;
    req.on('response', (res) => {
      answered = true;
      const sentBeforeAnswer = sent;
      wake?.();
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: the text itself
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, sentBeforeAnswer, length: form.length });
        // An answer before the whole body: nothing more will be sent on this request.
        if (sent < form.length) req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    req.on('close', () => wake?.());
    void (async () => {
      for await (const chunk of form.body()) {
        if (answered || req.destroyed) return;
        // A generated body is all microtasks: yield to I/O, or an early answer is only read at the end.
        await new Promise((resume) => setImmediate(resume));
        if (answered || req.destroyed) return;
        sent += chunk.length;
        if (!req.write(chunk)) {
          await new Promise<void>((resume) => {
            wake = resume;
            req.once('drain', resume);
          });
          wake = undefined;
        }
      }
      if (!answered && !req.destroyed) req.end();
    })().catch(reject);
  });
}

/** A process's resident set now (VmRSS) and at its peak (VmHWM), in bytes (Linux /proc). */
export async function residentBytes(pid: number): Promise<{ rss: number; peak: number }> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}
