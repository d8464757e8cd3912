// How long a recording lasts, read from its header within a small budget: the head of a URL by
// one bounded range request (never the whole file), or a file on this gateway's disk. Anything
// that cannot be read in time (a format that keeps its length at the end, a slow host, a name
// that does not resolve) is "unknown", never an error: the caller falls back to its own bound.
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { IAudioMetadata } from 'music-metadata';
import { safeRequest } from '../net/safe-request.js';
import { loadMediaLibrary } from './media-library.js';

export interface DurationBudget {
  /** For the whole read: resolution, connection, the head's bytes and the parse. */
  timeoutMs: number;
  /** At most this many bytes of a URL are fetched. */
  headBytes: number;
  /** Operator's `network.allow_private_urls`. */
  allowPrivate: boolean;
}

export const DEFAULT_DURATION_BUDGET = { timeoutMs: 3_000, headBytes: 256 * 1024 } as const;

// `duration: false`: the header's own figure (or one estimated from the size); never a scan of every frame.
const PARSE_OPTIONS = { duration: false, skipCovers: true } as const;
const CONTENT_RANGE_TOTAL = /\/(\d+)\s*$/;

export interface MediaLength {
  /** What the header states. */
  seconds: number;
  /** The whole file's size, when known (a disk file's, or what the host said). */
  bytes?: number;
}

/** The header's length, or undefined when the budget ran out first or the header does not say. */
export async function readDurationSeconds(source: { path: string } | { url: string }, budget: DurationBudget): Promise<number | undefined> {
  return (await readMediaLength(source, budget))?.seconds;
}

/** As readDurationSeconds, with the file's size where it is known. */
export async function readMediaLength(source: { path: string } | { url: string }, budget: DurationBudget): Promise<MediaLength | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), budget.timeoutMs);
  });
  try {
    const reading = 'path' in source ? parseDiskFile(source.path) : parseHead(source.url, budget);
    const read = await Promise.race([reading.catch(() => undefined), expired]);
    const seconds = read?.metadata.format.duration;
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return undefined;
    return read?.bytes === undefined ? { seconds } : { seconds, bytes: read.bytes };
  } finally {
    clearTimeout(timer);
  }
}

interface HeadRead {
  metadata: IAudioMetadata;
  bytes: number | undefined;
}

async function parseDiskFile(path: string): Promise<HeadRead> {
  const { parseFile } = await loadMediaLibrary();
  const [metadata, info] = await Promise.all([parseFile(path, PARSE_OPTIONS), stat(path)]);
  return { metadata, bytes: info.size };
}

async function parseHead(url: string, budget: DurationBudget): Promise<HeadRead | undefined> {
  const response = await safeRequest(url, {
    field: 'file_url',
    headers: { range: `bytes=0-${budget.headBytes - 1}` },
    maxResponseBytes: budget.headBytes,
    timeoutMs: budget.timeoutMs,
    allowPrivate: budget.allowPrivate,
  });
  if (response.status !== 200 && response.status !== 206) return undefined;
  // The whole file's size lets a parser bound the header's figure, or estimate from a bit rate.
  const size = response.status === 206 ? totalOfRange(response.headers['content-range']) : Number(response.headers['content-length']);
  const mimeType = response.headers['content-type']?.split(';')[0]?.trim();
  const fileInfo = { ...(mimeType && { mimeType }), ...(Number.isSafeInteger(size) && size > 0 && { size }) };
  // A stream, not a buffer: a buffer's parser takes its length for the file's size.
  const { parseStream } = await loadMediaLibrary();
  const metadata = await parseStream(Readable.from([response.body], { objectMode: false }), fileInfo, PARSE_OPTIONS);
  return { metadata, bytes: fileInfo.size };
}

function totalOfRange(header: string | string[] | undefined): number {
  const match = typeof header === 'string' ? CONTENT_RANGE_TOTAL.exec(header) : null;
  return match ? Number(match[1]) : Number.NaN;
}
