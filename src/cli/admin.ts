// `tollroute accounts …`, `keys …` and `channels …`: calls to the running gateway's admin API. The
// CLI never opens a store of its own for these, so it cannot act on an empty one by mistake, and it
// answers exactly as the API does (JSON on stdout, the API's error on stderr).
import { Command } from 'commander';

/** Calls the running gateway's admin API and prints its answer; rejects on a non-2xx. */
export type CallAdmin = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: Record<string, unknown>) => Promise<void>;

const micros = (value: string) => {
  if (!/^\d+$/.test(value)) throw new Error(`expected a whole number of micros, got "${value}"`);
  return Number(value);
};
const account = (id: string, rest = '') => `/admin/accounts/${encodeURIComponent(id)}${rest}`;

export function accountsCommand(callAdmin: CallAdmin): Command {
  const accounts = new Command('accounts').description("manage accounts and their balances (the running gateway's admin API)");
  accounts
    .command('list')
    .description('every account, newest first')
    .action(() => callAdmin('GET', '/admin/accounts'));
  accounts
    .command('create')
    .description('open an account, with an opening credit if given')
    .requiredOption('--name <name>', "the account's name")
    .option('--credit <micros>', 'opening balance in micros', micros)
    .option('--overdraft <micros>', 'how far below zero a settle may take the balance, in micros', micros)
    .action((opts: { name: string; credit?: number; overdraft?: number }) =>
      callAdmin('POST', '/admin/accounts', { name: opts.name, credit_micros: opts.credit, overdraft_micros: opts.overdraft }),
    );
  accounts
    .command('show <id>')
    .description('the account, with its test balance')
    .action((id: string) => callAdmin('GET', account(id)));
  const credit = (name: string, path: string, description: string) =>
    accounts
      .command(`${name} <id> <micros>`)
      .description(description)
      .option('--note <note>', 'kept on the ledger row')
      .action((id: string, amount: string, opts: { note?: string }) =>
        callAdmin('POST', account(id, path), { amount_micros: micros(amount), note: opts.note }),
      );
  credit('credit', '/credit', "add to the account's balance (a ledger row)");
  credit('test-credit', '/test-credit', "credit the account's test balance, which its test keys (tr-test-…) draw on");
  accounts
    .command('suspend <id>')
    .description('refuse every key of the account (live and test) and end its console sessions, until resumed')
    .action((id: string) => callAdmin('POST', account(id, '/suspend')));
  accounts
    .command('resume <id>')
    .description("let a suspended account's keys work again")
    .action((id: string) => callAdmin('POST', account(id, '/resume')));
  accounts
    .command('end-sessions <id>')
    .description("sign the account's holder out of every console session; its keys keep working")
    .action((id: string) => callAdmin('DELETE', account(id, '/sessions')));
  accounts
    .command('ledger <id>')
    .description("the account's ledger rows")
    .action((id: string) => callAdmin('GET', account(id, '/ledger')));
  accounts
    .command('usage <id>')
    .description("the account's usage rows")
    .action((id: string) => callAdmin('GET', account(id, '/usage')));
  accounts
    .command('login-link <id>')
    .description('a one-time link that signs the account in to the console (good once, for console.login_link_ttl_ms)')
    .action((id: string) => callAdmin('POST', account(id, '/login-links')));
  return accounts;
}

export function keysCommand(callAdmin: CallAdmin): Command {
  const keys = new Command('keys').description("issue, list and revoke API keys (the running gateway's admin API)");
  keys
    .command('list <accountId>')
    .description("the account's keys (never the keys themselves: only their prefixes)")
    .action((accountId: string) => callAdmin('GET', account(accountId, '/keys')));
  keys
    .command('create <accountId>')
    .description('issue a key; it is printed this once')
    .option('--name <name>', "the key's name")
    .option('--rpm <n>', 'requests per minute', micros)
    .option('--test', 'a test key (tr-test-…): served by the sandbox alone, on the test balance')
    .action((accountId: string, opts: { name?: string; rpm?: number; test?: boolean }) =>
      callAdmin('POST', account(accountId, opts.test ? '/test-keys' : '/keys'), { name: opts.name, rpm: opts.rpm }),
    );
  keys
    .command('revoke <keyId>')
    .description('refuse the key from now on')
    .action((keyId: string) => callAdmin('DELETE', `/admin/keys/${encodeURIComponent(keyId)}`));
  return keys;
}

export function channelsCommand(callAdmin: CallAdmin): Command {
  const channels = new Command('channels').description("see and steer a running gateway's channels (its admin API; this instance's view)");
  channels
    .command('list')
    .description('every channel and key with its circuit state, recent error rate, latency and last error')
    .action(() => callAdmin('GET', '/admin/channels'));
  channels
    .command('disable <name>')
    .description('take the channel out of traffic at once, until enabled')
    .action((name: string) => callAdmin('POST', `/admin/channels/${encodeURIComponent(name)}/disable`));
  channels
    .command('enable <name>')
    .description('put a disabled channel back in traffic at once')
    .action((name: string) => callAdmin('POST', `/admin/channels/${encodeURIComponent(name)}/enable`));
  return channels;
}
