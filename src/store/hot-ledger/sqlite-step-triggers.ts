// The SQL of the hot ledger's steps on SQLite (sqlite-steps.ts runs them): a view per step in
// this connection's temp schema, and its INSTEAD OF trigger that writes the step's rows.
import { USAGE_COLUMNS } from '../usage-recent.js';

// A step's writes go to SQLite as one statement: an insert into a view of this connection's temp
// schema, whose INSTEAD OF trigger writes the rows (the hold, the ledger row chained to the
// account's last, the account, the usage row). Each statement run from JavaScript costs its
// bindings (a string is copied twice), its step and its reset; the trigger does the same writes
// inside SQLite, each value bound once.
// A step's writes land together or not at all, in a transaction or outside one. Temp objects
// belong to this connection alone: no other writer (Kysely's steps, the CLI) runs these triggers,
// and they are made afresh whenever a connection opens. SQLite checks them on ALTER TABLE, so
// schema changes run before the hot ledger is prepared (store/open.ts).
/** The account's last ledger row, which a step's first ledger row follows in the chain. */
const LAST_LEDGER_ROW = '(select last_ledger_id from accounts where id = new.account_id)';
/** A ledger row of the step's hold: its movement, request, note, time and the row before it. */
const ledgerRow = (kind: string, balanceDelta: string, heldDelta: string, requestId: string, note: string, createdAt: string, prevId: string) => `
  insert into ledger (account_id, kind, balance_delta_micros, held_delta_micros, hold_id, request_id, model, note, created_at, prev_id)
    values (new.account_id, ${kind}, ${balanceDelta}, ${heldDelta}, new.hold_id, ${requestId}, new.model, ${note}, ${createdAt}, ${prevId});`;
/** The step's hold row, in the state given. */
const holdRow = (amount: string, state: string, charged: string, createdAt: string, endedAt: string) => `
  insert into holds (id, account_id, key_id, amount_micros, state, request_id, model, endpoint, task_id, charged_micros, created_at, ended_at, instance_id, progress, client_request_id)
    values (new.hold_id, new.account_id, new.key_id, ${amount}, ${state}, new.request_id, new.model, new.endpoint, null, ${charged}, ${createdAt}, ${endedAt}, new.instance_id, null, new.client_request_id);`;
/** A settle's usage row. */
const usageRow = (requestId: string) => `
  insert into usage_recent (${USAGE_COLUMNS})
    values (new.usage_id, new.account_id, new.key_id, new.hold_id, ${requestId}, new.model, new.endpoint, new.units, new.charged, new.now,
            new.unbilled, new.flags, new.client_request_id, new.upstream_ms, new.channel, new.attempts, new.price_id);`;

const MOVE_FUNDS = (kind: string, balanceDelta: string, heldDelta: string, note: string) => `
  ${ledgerRow(kind, balanceDelta, heldDelta, 'new.request_id', note, 'new.now', LAST_LEDGER_ROW)}
  update accounts set balance_micros = balance_micros + (${balanceDelta}), held_micros = held_micros + (${heldDelta}),
    last_ledger_id = last_insert_rowid() where id = new.account_id;`;

// A step's guard: its statement stops with `message` when `condition` holds. raise(abort) undoes
// that statement alone, never the transaction it runs in, and the step reads the message.
const abortWhen = (message: string, condition: string) => `select raise(abort, '${message}') where ${condition};`;
export const raised = (error: unknown, message: string) => error instanceof Error && error.message === message;

// An open hold as the hot steps end it (a spend-capped one only the transaction step ends): the one
// condition of the end's read and of its update. A step that ends a hold writes nothing unless its
// update found the hold open: the update's own where clause is the exactly-once gate, so a step may
// end a hold it knows from memory (sqlite-steps.ts) without reading it first. changes() inside a trigger
// counts the trigger's last statement.
export const isOpenHold = (id: string) => `id = ${id} and state = 'open' and cap_periods is null`;
export const NOT_OPEN = 'hold not open';
const NOT_OPEN_GUARD = abortWhen(NOT_OPEN, 'changes() = 0');
// A hold writes nothing unless the account exists and its balance covers the amount, checked by the
// hold's own statement: a hold is one statement, with no read before it.
export const NOT_COVERED = 'hold not covered';
// `reserved`: what holds decided in memory and not yet written keep of the balance (sqlite.ts).
// `checked`: an expression that turns the guard off when false (a settle already answered).
const coversGuard = (amount: string, reserved: string, checked = '1') =>
  abortWhen(NOT_COVERED, `${checked} and coalesce((select balance_micros from accounts where id = new.account_id), -1) - ${reserved} < ${amount}`);

/** A view of the named columns that holds no rows: only its trigger does anything. */
const stepView = (name: string, columns: string[]) =>
  `create temp view if not exists ${name} (${columns.join(', ')}) as select ${columns.map(() => 'null').join(', ')} where 0;`;

export const HOLD_COLUMNS = [
  'hold_id',
  'account_id',
  'key_id',
  'amount',
  'request_id',
  'model',
  'endpoint',
  'now',
  'instance_id',
  'client_request_id',
  'reserved',
];
export const SETTLE_COLUMNS = [
  ...['hold_id', 'account_id', 'charged', 'held', 'request_id', 'model', 'now'],
  ...['usage_id', 'key_id', 'endpoint', 'units', 'unbilled', 'flags', 'client_request_id', 'upstream_ms', 'channel', 'attempts', 'price_id'],
];
export const RELEASE_COLUMNS = ['hold_id', 'account_id', 'held', 'request_id', 'model', 'note', 'now'];
export const HOLD_RELEASE_COLUMNS = [
  ...['hold_id', 'account_id', 'key_id', 'held', 'request_id', 'model', 'endpoint', 'held_at', 'instance_id', 'client_request_id'],
  ...['note', 'now'],
];
export const HOLD_SETTLE_COLUMNS = [
  ...['hold_id', 'account_id', 'key_id', 'held', 'request_id', 'model', 'endpoint', 'held_at', 'instance_id', 'client_request_id'],
  ...['charged', 'settle_request_id', 'now', 'usage_id', 'units', 'unbilled', 'flags', 'upstream_ms', 'channel', 'attempts', 'price_id'],
  'checked',
];

// A hold decided in memory and never written (sqlite.ts), written with its end: the hold row once,
// already ended, and its ledger row; the end's ledger row follows it in the chain, and the account
// is updated once, by the end's net movement. The balance must still cover the hold, unless the
// settle's answer went out already (`checked` false: its charge is capped to what is left instead).
const UNWRITTEN_HOLD = (state: string, charged: string, checked = '1') => `
    ${coversGuard('new.held', '0', checked)}
    ${holdRow('new.held', state, charged, 'new.held_at', 'new.now')}
    ${ledgerRow("'hold'", '-new.held', 'new.held', 'new.request_id', 'null', 'new.held_at', LAST_LEDGER_ROW)}`;

export const STEP_TRIGGERS = `
  ${stepView('hot_hold', HOLD_COLUMNS)}
  create temp trigger if not exists hot_hold_write instead of insert on hot_hold begin
    ${coversGuard('new.amount', 'new.reserved')}
    ${holdRow('new.amount', "'open'", 'null', 'new.now', 'null')}
    ${MOVE_FUNDS("'hold'", '-new.amount', 'new.amount', 'null')}
  end;
  ${stepView('hot_settle', SETTLE_COLUMNS)}
  create temp trigger if not exists hot_settle_write instead of insert on hot_settle begin
    update holds set state = 'settled', charged_micros = new.charged, ended_at = new.now
      where ${isOpenHold('new.hold_id')};
    ${NOT_OPEN_GUARD}
    ${MOVE_FUNDS("'settle'", 'new.held - new.charged', '-new.held', 'null')}
    ${usageRow('new.request_id')}
  end;
  ${stepView('hot_release', RELEASE_COLUMNS)}
  create temp trigger if not exists hot_release_write instead of insert on hot_release begin
    update holds set state = 'released', charged_micros = null, ended_at = new.now
      where ${isOpenHold('new.hold_id')};
    ${NOT_OPEN_GUARD}
    ${MOVE_FUNDS("'release'", 'new.held', '-new.held', 'new.note')}
  end;
  ${stepView('hot_hold_settle', HOLD_SETTLE_COLUMNS)}
  create temp trigger if not exists hot_hold_settle_write instead of insert on hot_hold_settle begin
    ${UNWRITTEN_HOLD("'settled'", 'new.charged', 'new.checked')}
    ${ledgerRow("'settle'", 'new.held - new.charged', '-new.held', 'new.settle_request_id', 'null', 'new.now', 'last_insert_rowid()')}
    update accounts set balance_micros = balance_micros - new.charged, last_ledger_id = last_insert_rowid() where id = new.account_id;
    ${usageRow('new.settle_request_id')}
  end;
  ${stepView('hot_hold_release', HOLD_RELEASE_COLUMNS)}
  create temp trigger if not exists hot_hold_release_write instead of insert on hot_hold_release begin
    ${UNWRITTEN_HOLD("'released'", 'null')}
    ${ledgerRow("'release'", 'new.held', '-new.held', 'new.request_id', 'new.note', 'new.now', 'last_insert_rowid()')}
    update accounts set last_ledger_id = last_insert_rowid() where id = new.account_id;
  end;`;

export const insertInto = (view: string, columns: string[]) => `insert into ${view} values (${columns.map(() => '?').join(', ')})`;
