// A finished batch's output and error files: JSONL written under the data directory's stored files,
// as files of the batch's account (GET /v1/files/{id}/content), kept as long as any upload.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Insertable } from 'kysely';
import { PARTIAL_SUFFIX } from '../files/leftovers.js';
import { linesAfter } from '../store/batch-lines.js';
import type { BatchRow } from '../store/batches.js';
import type { Store } from '../store/open.js';
import type { FilesTable } from '../store/schema.js';
import { fileLine } from './views.js';

const PAGE = 1_000;

/** A JSONL file being written a line at a time, made only once it has a line. */
class LinesFile {
  private stream: ReturnType<typeof createWriteStream> | undefined;
  readonly id = `file_${randomBytes(16).toString('hex')}`;
  bytes = 0;
  constructor(private readonly dir: string) {}
  get target() {
    return path.join(this.dir, this.id);
  }
  async write(line: string) {
    this.stream ??= createWriteStream(`${this.target}${PARTIAL_SUFFIX}`, { flags: 'wx' });
    const text = `${line}\n`;
    this.bytes += Buffer.byteLength(text);
    if (!this.stream.write(text)) await once(this.stream, 'drain');
  }
  /** Whether a line was written; the file is then complete under its own name. */
  async end(): Promise<boolean> {
    if (!this.stream) return false;
    this.stream.end();
    await once(this.stream, 'finish');
    await rename(`${this.target}${PARTIAL_SUFFIX}`, this.target);
    return true;
  }
  async discard() {
    this.stream?.destroy();
    await rm(`${this.target}${PARTIAL_SUFFIX}`, { force: true });
    await rm(this.target, { force: true });
  }
}

export interface WrittenFiles {
  output: Insertable<FilesTable> | null;
  error: Insertable<FilesTable> | null;
  /** Deletes the files from disk (their rows were not stored). */
  discard(): Promise<void>;
}

/**
 * Writes the batch's lines in order: answered 2xx to the output file, the other ended lines to the
 * error file; lines cancelled before they ran to neither. A file with no line is not made (null).
 */
export async function writeBatchFiles(store: Store, batch: BatchRow, { dir, ttlMs, now }: { dir: string; ttlMs: number; now: number }): Promise<WrittenFiles> {
  await mkdir(dir, { recursive: true });
  const output = new LinesFile(dir);
  const error = new LinesFile(dir);
  const discard = async () => {
    await Promise.all([output.discard(), error.discard()]);
  };
  try {
    for (let after = 0; ; ) {
      const lines = await linesAfter(store.db, { batchId: batch.id, afterLineNo: after, limit: PAGE });
      for (const line of lines) {
        if (line.status === 'succeeded') await output.write(fileLine(line));
        else if (line.status === 'failed') await error.write(fileLine(line));
      }
      if (lines.length < PAGE) break;
      after = lines.at(-1)!.line_no;
    }
    const row = (file: LinesFile, name: string, kept: boolean): Insertable<FilesTable> | null =>
      kept
        ? {
            id: file.id,
            account_id: batch.account_id,
            filename: `${batch.id}_${name}.jsonl`,
            content_type: 'application/jsonl',
            bytes: file.bytes,
            storage_path: file.target,
            created_at: now,
            expires_at: now + ttlMs,
            purpose: 'batch_output',
          }
        : null;
    return { output: row(output, 'output', await output.end()), error: row(error, 'error', await error.end()), discard };
  } catch (failure) {
    await discard();
    throw failure;
  }
}
