// The runnable code blocks of the project's documents, and how each is run against a live gateway.
// A block is runnable when its fence says sh, bash, js, mjs or ts; an HTML comment line
// `<!-- docs-test: skip (reason) -->` right before its fence leaves it out, and must give a reason.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

const RUNNABLE = new Set(['sh', 'bash', 'js', 'mjs', 'ts']);
const SKIP_MARKER = /^<!--\s*docs-test:\s*skip\b(.*?)-->\s*$/;
const SKIP_REASON = /^\s*\((.*\S.*)\)\s*$/;

export interface CodeBlock {
  /** The document, relative to the project root. */
  readonly file: string;
  /** The line of the opening fence, counted from 1. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** Why the block is not run, when its marker says so. */
  readonly skip?: string;
  /** What is wrong with the block's marker (a skip without a reason). */
  readonly markerError?: string;
}

/** README.md and every page under docs/, found when the test runs, so a new page is covered too. */
export function documentPaths(root = PROJECT_ROOT): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => path.join('docs', name));
  return ['README.md', ...docs].filter((file) => existsSync(path.join(root, file)));
}

/** The runnable blocks of one markdown text, with their skip markers read. */
export function extractBlocks(file: string, markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!fence) continue;
    const [, indent, marks, lang] = fence;
    const body: string[] = [];
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(marks!)) body.push(lines[end++]!.slice(indent!.length));
    const opening = i;
    i = end;
    if (!RUNNABLE.has(lang!)) continue;
    const marker = SKIP_MARKER.exec((lines[opening - 1] ?? '').trim());
    const reason = marker ? SKIP_REASON.exec(marker[1]!)?.[1] : undefined;
    blocks.push({
      file,
      line: opening + 1,
      lang: lang!,
      code: body.join('\n'),
      ...(reason !== undefined && { skip: reason }),
      ...(marker && reason === undefined && { markerError: 'a docs-test skip marker must give its reason: <!-- docs-test: skip (why) -->' }),
    });
  }
  return blocks;
}

export function readBlocks(root = PROJECT_ROOT): CodeBlock[] {
  return documentPaths(root).flatMap((file) => extractBlocks(file, readFileSync(path.join(root, file), 'utf8')));
}

/** The documents' addresses (gateway on 8080, sandbox on 8081) turned into the test's own. */
export function retarget(code: string, urls: { gateway: string; sandbox: string }): string {
  return code
    .replace(/https?:\/\/(?:127\.0\.0\.1|localhost):8080/g, urls.gateway)
    .replace(/https?:\/\/(?:127\.0\.0\.1|localhost):8081/g, urls.sandbox)
    .replace(/(?<![\w/.:])localhost:8080/g, urls.gateway)
    .replace(/(?<![\w/.:])localhost:8081/g, urls.sandbox);
}

export interface BlockRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs one block to its end: shell blocks with bash under errexit, nounset and pipefail (a failed
 * command or an unset variable fails the block); JS and TS blocks as ES modules from a file in the
 * project root, so their imports resolve as they would in a reader's checkout.
 */
export async function runBlock(block: CodeBlock, env: Record<string, string>, timeoutMs = 60_000): Promise<BlockRun> {
  if (block.lang === 'sh' || block.lang === 'bash') {
    return run('bash', ['-euo', 'pipefail', '-c', block.code], env, timeoutMs);
  }
  const ext = block.lang === 'ts' ? 'mts' : 'mjs';
  const file = path.join(PROJECT_ROOT, `.docs-block-${process.pid}-${block.line}.${ext}`);
  writeFileSync(file, block.code);
  try {
    return await run(process.execPath, block.lang === 'ts' ? ['--import', 'tsx', file] : [file], env, timeoutMs);
  } finally {
    rmSync(file, { force: true });
  }
}

function run(command: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<BlockRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\n(stopped after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * A directory holding a `tollroute` command, as an install provides: the built CLI (dist/main.js)
 * when there is one, else the source through tsx, so the test needs no build but is quicker after one.
 */
export function cliShim(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'tollroute-docs-bin-'));
  const command = path.join(dir, 'tollroute');
  const built = path.join(PROJECT_ROOT, 'dist/main.js');
  const args = existsSync(built) ? `"${built}"` : `--import tsx "${path.join(PROJECT_ROOT, 'src/main.ts')}"`;
  writeFileSync(command, `#!/bin/sh\nexec "${process.execPath}" ${args} "$@"\n`);
  chmodSync(command, 0o755);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What a reader needs to see of a failed block: where it is, and what it printed. */
export function describeFailure(block: CodeBlock, result: BlockRun): string {
  const tail = (text: string) => (text.length > 2000 ? `…${text.slice(-2000)}` : text);
  return `${block.file}:${block.line} (${block.lang}) exited with ${result.code}\n--- stdout\n${tail(result.stdout)}\n--- stderr\n${tail(result.stderr)}`;
}
