import type { OutgoingHttpHeaders } from 'node:http';

// What a `malformed` fault sends in place of an answer: the real answer cut short, so the bytes still look like
// the protocol (the right content type, the right event name) and only a parser notices. Every cut is chosen so
// that no parser can accept it; the reason is given beside each.

/** How a stream separates its chunks: SSE events, or one JSON object per line (speech). */
export type StreamFraming = 'sse' | 'lines';

const half = (length: number) => Math.max(1, Math.floor(length / 2));

/**
 * The first half of a plain answer's bytes. Every sandbox JSON answer is an object, and a proper prefix of an
 * object lacks its closing brace, so it never parses. An empty answer (recognition's submit) becomes `{`.
 */
export function malformedBody(body: string | Buffer, headers: OutgoingHttpHeaders): { body: Buffer; headers: OutgoingHttpHeaders } {
  const bytes = Buffer.from(body);
  if (bytes.length === 0) return { body: Buffer.from('{'), headers: { ...headers, 'content-type': 'application/json' } };
  return { body: bytes.subarray(0, half(bytes.length)), headers };
}

/**
 * One stream chunk with its JSON payload cut in half (an object again, so it never parses) and its framing
 * kept: an SSE chunk keeps its `event:` line and blank-line terminator, a line keeps its newline, so the client
 * reads a whole event whose data is broken rather than a stream that stopped mid-event.
 */
export function malformedChunk(chunk: string, framing: StreamFraming): string {
  if (framing === 'lines') {
    const line = chunk.replace(/\n$/, '');
    return `${line.slice(0, half(line.length))}\n`;
  }
  const dataAt = chunk.lastIndexOf('data: ') + 'data: '.length;
  const payload = chunk.slice(dataAt).replace(/\n+$/, '');
  return `${chunk.slice(0, dataAt)}${payload.slice(0, half(payload.length))}\n\n`;
}

/**
 * A protobuf frame one byte short. Whatever the frame's last field, it loses its last byte: a varint then has
 * no final byte, a length-delimited field runs past the end (or, when empty, loses its length), so no protobuf
 * decoder accepts it, the sandbox's own included.
 */
export function malformedFrame(frame: Buffer): Buffer {
  return frame.subarray(0, frame.length - 1);
}
