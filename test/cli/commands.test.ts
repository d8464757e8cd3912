// The command line itself: its version, help on every command, and the guards that keep it from
// acting on a store nobody serves.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { cliProgram } from '../../src/cli/program.js';
import { freePort, runCli } from '../helpers/processes.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

/** The names listed under "Commands:" in a help text. */
function commandsIn(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
  return [...section.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!).filter((name) => name !== 'help');
}

test('--version prints the package version', async () => {
  const printed = await runCli(['--version'], {});
  assert.deepEqual([printed.code, printed.stdout.trim()], [0, version]);
});

test('the command line answers --help with its commands', async () => {
  const top = await runCli(['--help'], {});
  assert.equal(top.code, 0);
  assert.deepEqual(commandsIn(top.stdout).sort(), ['accounts', 'channels', 'keys', 'migrate', 'prices', 'reload', 'sandbox', 'serve']);
});

// Read from the program itself: one process per command would spend a minute starting up.
test('every command and subcommand has help with its usage', () => {
  const program = cliProgram();
  const paths: string[][] = [];
  for (const group of program.commands) {
    assert.match(group.helpInformation(), new RegExp(`^Usage: tollroute ${group.name()}`, 'm'));
    for (const sub of group.commands) {
      assert.match(sub.helpInformation(), new RegExp(`^Usage: tollroute ${group.name()} ${sub.name()}`, 'm'));
      paths.push([group.name(), sub.name()]);
    }
  }
  assert.ok(paths.length >= 15, `${paths.length} subcommands`);
});

test('migrate refuses a SQLite file that does not exist, naming its path, and makes it with --create', async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'tollroute-cli-')), 'store.db');
  const refused = await runCli(['migrate'], { TOLLROUTE_STORE: `sqlite:${file}` });
  assert.equal(refused.code, 1);
  assert.ok(refused.stderr.includes(`no store at ${file}`), refused.stderr);
  assert.equal(existsSync(file), false, 'no empty store was made');
  const created = await runCli(['migrate', '--create'], { TOLLROUTE_STORE: `sqlite:${file}` });
  assert.deepEqual([created.code, JSON.parse(created.stdout)], [0, { migrated: 'sqlite' }]);
  assert.equal(existsSync(file), true);
});

test('an account command with no gateway running says so, and opens no store', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollroute-cli-'));
  const port = String(await freePort());
  const printed = await runCli(['accounts', 'list'], { PORT: port, TOLLROUTE_DATA_DIR: dataDir, TOLLROUTE_ADMIN_TOKEN: 'adm-cli-token-0123456789' });
  assert.equal(printed.code, 1);
  assert.match(printed.stderr, new RegExp(`no gateway answers at http://127\\.0\\.0\\.1:${port}`));
  assert.equal(existsSync(path.join(dataDir, 'tollroute.db')), false);
});

test('an account command without an admin token is refused before any call', async () => {
  const printed = await runCli(['accounts', 'list'], { TOLLROUTE_ADMIN_TOKEN: '' });
  assert.equal(printed.code, 1);
  assert.match(printed.stderr, /set --admin-token or TOLLROUTE_ADMIN_TOKEN/);
});
