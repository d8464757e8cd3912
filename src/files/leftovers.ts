// Uploads a process left when it died mid-request: partial files (`.part`) in the files folder and
// anything in the upload spool, which holds a file only while its request runs. Removed at start-up,
// before the store is opened: a disk that such leftovers filled would otherwise refuse the store's
// first write, and the gateway would never start to free it.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * The suffix of an upload still being received: it takes its own name only once it ended whole,
 * so whatever a dead process left mid-upload is known by its name.
 */
export const PARTIAL_SUFFIX = '.part';

/** Where POST /v1/files keeps uploads, under the data directory. */
export const storedFilesDir = (dataDir: string) => path.resolve(dataDir, 'files');

export interface LeftoverLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Deletes `<filesDir>/*.part` and every file in `spoolDir`. The data directory is one process's
 * (its settle journals are too), so at start no request of anyone's is writing there. Never
 * throws: a leftover that cannot be removed is logged, and the start goes on.
 */
export async function removeUploadLeftovers({ filesDir, spoolDir, log }: { filesDir: string; spoolDir: string; log: LeftoverLogger }): Promise<number> {
  const partial = (await namesIn(filesDir, log)).filter((name) => name.endsWith(PARTIAL_SUFFIX)).map((name) => path.join(filesDir, name));
  const spooled = (await namesIn(spoolDir, log)).map((name) => path.join(spoolDir, name));
  let removed = 0;
  for (const file of [...partial, ...spooled]) {
    try {
      await rm(file, { force: true });
      removed++;
    } catch (error) {
      log.warn({ file, err: error }, 'an upload left by an earlier run could not be removed');
    }
  }
  if (removed > 0) log.info({ removed }, 'uploads left unfinished by an earlier run removed');
  return removed;
}

async function namesIn(dir: string, log: LeftoverLogger): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') log.warn({ dir, err: error }, 'could not list a folder for leftover uploads');
    return [];
  }
}
