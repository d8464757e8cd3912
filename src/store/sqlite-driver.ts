// The SQLite driver for the Node.js that runs the gateway. better-sqlite3 13 (Node-API, shipped
// prebuilt) serves Node 22 and later but crashes on Node 20, so there the optional
// `better-sqlite3-node20` (version 12, compiled at install) is loaded instead. Version 12 is never
// used on Node 24: it aborts the process when the garbage collector frees a statement.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const nodeMajor = Number(process.versions.node.split('.')[0]);
const driverName = nodeMajor >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';

function resolveDriver(): string {
  try {
    return require.resolve(driverName);
  } catch (error) {
    throw new Error(
      `the SQLite driver ${driverName} is not installed for Node.js ${process.versions.node} ` +
        '(on Node 20 it is compiled at install time; Node.js 22 or 24 needs no compiler)',
      { cause: error },
    );
  }
}

/** The driver module's path, for worker threads that open connections of their own. */
export const sqliteDriverPath = resolveDriver();

/** better-sqlite3's `Database` class, from the driver this Node.js can run. */
export const Database: typeof BetterSqlite3 = require(sqliteDriverPath);
