// A bench's temporary directory: the targets' stores and logs, the load scripts, any profiles or
// samples. Removed when the bench ends, unless BENCH_KEEP_WORKDIR=1 keeps it to be looked into.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A new directory under the system's temporary one, named after the bench (`tollroute-<name>-…`). */
export const makeWorkDir = (name = 'bench'): string => mkdtempSync(path.join(os.tmpdir(), `tollroute-${name}-`));

/**
 * Removes `workDir`; with BENCH_KEEP_WORKDIR=1 keeps it instead and says where (and what is in it,
 * when `contents` says). Answers whether it was removed, for a bench with files of its own elsewhere.
 */
export function removeWorkDir(workDir: string, contents?: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.BENCH_KEEP_WORKDIR === '1') {
    process.stdout.write(`work directory kept${contents ? ` (${contents})` : ''}: ${workDir}\n`);
    return false;
  }
  rmSync(workDir, { recursive: true, force: true });
  return true;
}
