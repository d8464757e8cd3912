// `tollroute accounts …` and `tollroute keys …`: the admin API's operations, straight on the store.
// `tollroute channels …`: channel health lives in a running gateway's memory, so those call its admin API.
import { Command } from 'commander';
import { endSessionsOf, resumeAccount, suspendAccount } from '../admin/suspension.js';
import { accountView, iso, ledgerView, usageView } from '../admin/views.js';
import { createAccount, creditAccount } from '../billing/accounts.js';
import { issueApiKey } from '../billing/api-keys.js';
import { creditTestFunds, testBalance, testTwin } from '../billing/test-mode.js';
import type { Config } from '../config/schema.js';
import { issueLoginLink } from '../console/login-links.js';
import { findAccount } from '../store/accounts.js';
import { revokeApiKey } from '../store/api-keys.js';
import { listLedger } from '../store/ledger-rows.js';
import type { Store } from '../store/open.js';
import { listUsage } from '../store/usage.js';

type WithStore = <T>(work: (store: Store, config: Config) => Promise<T>) => Promise<void>;

const micros = (value: string) => {
  if (!/^\d+$/.test(value)) throw new Error(`expected a whole number of micros, got "${value}"`);
  return Number(value);
};

async function accountOrFail(store: Store, id: string) {
  const account = await findAccount(store.db, id);
  if (!account) throw new Error(`account ${id} not found`);
  return account;
}

/** A live account: a test twin's access goes with its live account's. */
async function liveAccountOrFail(store: Store, id: string) {
  const account = await accountOrFail(store, id);
  if (account.livemode === 0) throw new Error(`account ${id} is a test account; act on its live account ${account.live_account_id}`);
  return account;
}

const suspendedAt = (at: number | null) => (at === null ? null : iso(at));

export function accountsCommand(withStore: WithStore): Command {
  const accounts = new Command('accounts').description('manage accounts and their balances');
  accounts
    .command('create')
    .requiredOption('--name <name>')
    .option('--credit <micros>', 'opening balance in micros', micros)
    .action((opts: { name: string; credit?: number }) =>
      withStore(async (store) => accountView(await createAccount(store, { name: opts.name, creditMicros: opts.credit ?? 0 }))),
    );
  accounts.command('show <id>').action((id: string) =>
    withStore(async (store) => {
      const account = await accountOrFail(store, id);
      return { ...accountView(account), suspended_at: suspendedAt(account.suspended_at), ...(await testBalance(store, account.id)) };
    }),
  );
  // Straight on the store: a running gateway serves the account's keys from memory for up to a
  // second more (the admin API's suspend takes effect at once on the instance that answers it).
  accounts
    .command('suspend <id>')
    .description('refuse every key of the account (live and test) and end its console sessions, until resumed')
    .action((id: string) =>
      withStore(async (store) => {
        const { id: accountId } = await liveAccountOrFail(store, id);
        const change = await suspendAccount(store, { accountId, now: Date.now() });
        return { id: accountId, suspended_at: suspendedAt((await accountOrFail(store, accountId)).suspended_at), sessions_ended: change?.sessionsEnded ?? 0 };
      }),
    );
  accounts
    .command('resume <id>')
    .description("let a suspended account's keys work again")
    .action((id: string) =>
      withStore(async (store) => {
        const { id: accountId } = await liveAccountOrFail(store, id);
        await resumeAccount(store, { accountId });
        return { id: accountId, suspended_at: null, sessions_ended: 0 };
      }),
    );
  accounts
    .command('end-sessions <id>')
    .description("sign the account's holder out of every console session; its keys keep working")
    .action((id: string) =>
      withStore(async (store) => {
        const account = await liveAccountOrFail(store, id);
        const ended = await endSessionsOf(store, { accountId: account.id, now: Date.now() });
        return { id: account.id, suspended_at: suspendedAt(account.suspended_at), sessions_ended: ended };
      }),
    );
  accounts
    .command('credit <id> <micros>')
    .option('--note <note>')
    .action((id: string, amount: string, opts: { note?: string }) =>
      withStore(async (store) => accountView(await creditAccount(store, { accountId: id, amountMicros: micros(amount), note: opts.note }))),
    );
  accounts
    .command('test-credit <id> <micros>')
    .description("credits the account's test balance, which its test keys (tr-test-…) draw on")
    .option('--note <note>')
    .action((id: string, amount: string, opts: { note?: string }) =>
      withStore(async (store) => {
        await creditTestFunds(store, { accountId: id, amountMicros: micros(amount), note: opts.note });
        return { ...accountView(await accountOrFail(store, id)), ...(await testBalance(store, id)) };
      }),
    );
  accounts
    .command('ledger <id>')
    .action((id: string) =>
      withStore(async (store) => ({ data: (await listLedger(store, { accountId: (await accountOrFail(store, id)).id })).map(ledgerView) })),
    );
  accounts.command('usage <id>').action((id: string) =>
    withStore(async (store) => {
      const account = await accountOrFail(store, id);
      return { data: (await listUsage(store.db, { accountId: account.id })).map((row) => usageView(row, account.livemode !== 0)) };
    }),
  );
  accounts
    .command('login-link <id>')
    .description('a one-time link that signs the account in to the console (good once, for console.login_link_ttl_ms)')
    .action((id: string) =>
      withStore(async (store, config) => {
        const account = await accountOrFail(store, id);
        const link = await issueLoginLink(store, { accountId: account.id, publicUrl: config.public_url, ttlMs: config.console.login_link_ttl_ms });
        return { url: link.url, expires_at: iso(link.expiresAt) };
      }),
    );
  return accounts;
}

export function keysCommand(withStore: WithStore): Command {
  const keys = new Command('keys').description('issue and revoke API keys');
  keys
    .command('create <accountId>')
    .option('--name <name>')
    .option('--rpm <n>', 'requests per minute', (v) => micros(v))
    .option('--test', 'a test key (tr-test-…): served by the sandbox alone, on the test balance')
    .action((accountId: string, opts: { name?: string; rpm?: number; test?: boolean }) =>
      withStore(async (store) => {
        // A test key belongs to the account's test twin, made on first need.
        const account = opts.test ? await testTwin(store, accountId) : await accountOrFail(store, accountId);
        const { key, row } = await issueApiKey(store, { accountId: account.id, name: opts.name ?? null, rpm: opts.rpm ?? null, test: account.livemode === 0 });
        return { id: row.id, key, prefix: row.prefix, created_at: new Date(row.created_at).toISOString() };
      }),
    );
  keys.command('revoke <keyId>').action((keyId: string) =>
    withStore(async (store) => {
      if (!(await revokeApiKey(store.db, { keyId, now: Date.now() }))) throw new Error(`key ${keyId} not found or already revoked`);
      return { id: keyId, revoked: true };
    }),
  );
  return keys;
}

/** Calls the running gateway's admin API and prints its answer; rejects on a non-2xx. */
export type CallAdmin = (method: 'GET' | 'POST', path: string) => Promise<void>;

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
