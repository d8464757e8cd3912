// A node:test reporter that prints, after everything else, the counts of the run, the failed tests
// by name and the slowest files, so the outcome of `npm test` is read at the end of its output
// without scrolling, and a file that makes the suite slow is named.
// Plain JavaScript: the runner loads reporters without tsx.
import path from 'node:path';

const SLOWEST_SHOWN = 12;

function duration(ms) {
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
}

/** The test's place: its file, relative to the working directory, and the names of its suites. */
function place(data, suites) {
  const file = data.file ? path.relative(process.cwd(), data.file) : '';
  return [file, ...suites.slice(0, data.nesting), data.name].filter(Boolean).join(' › ');
}

export default async function* summaryReporter(source) {
  const started = Date.now();
  const counts = { tests: 0, passed: 0, failed: 0, skipped: 0, todo: 0 };
  const files = new Set();
  const failed = [];
  const suites = [];
  const fileMs = new Map();
  for await (const { type, data } of source) {
    if (type === 'test:start') suites[data.nesting] = data.name;
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    if (data.file) files.add(data.file);
    // A file's time: its top-level tests and suites (hooks included), not its process's start.
    if (data.file && data.nesting === 0) fileMs.set(data.file, (fileMs.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0));
    if (data.details?.type === 'suite') continue;
    counts.tests++;
    if (data.skip !== undefined && data.skip !== false) counts.skipped++;
    else if (data.todo !== undefined && data.todo !== false) counts.todo++;
    else if (type === 'test:pass') counts.passed++;
    else {
      counts.failed++;
      failed.push(place(data, suites));
    }
  }
  const line = Object.entries(counts).map(([name, count]) => `${name} ${count}`);
  yield `\n── summary: ${[...line, `files ${files.size}`, duration(Date.now() - started)].join(' · ')}\n`;
  const slowest = [...fileMs].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_SHOWN);
  if (slowest.length > 1)
    yield `slowest files:\n${slowest.map(([file, ms]) => `  ${duration(ms).padStart(6)}  ${path.relative(process.cwd(), file)}`).join('\n')}\n`;
  if (failed.length > 0) yield `failed:\n${failed.map((name) => `  ✖ ${name}`).join('\n')}\n`;
}
