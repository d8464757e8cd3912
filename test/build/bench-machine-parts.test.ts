// The perf bench's split of a process's samples into machine-level parts (bench/machine-parts.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MACHINE_PARTS, type MachinePart, machinePartOf, machinePartsPerCall, noParts, parsePerfReport } from '../../bench/machine-parts.js';
import { perfPartsTable } from '../../bench/perf-parts.js';

const REPORT = `
# To display the perf.data header info, please use --header/--header-only options.
#
    10.00%  [k] _raw_spin_unlock_irqrestore
     8.00%  [.] sqlite3VdbeExec
     6.00%  [.] Builtins_KeyedLoadIC_Megamorphic
     5.00%  [.] JS:*run file:///srv/app/dist/pipeline/metered-call.js:82:23
     5.00%  [.] JS:*routeHandler /srv/app/node_modules/fastify/lib/route.js:465:25
     4.00%  [.] JS:*_resume /srv/app/node_modules/undici/lib/dispatcher/client.js:589:18
     4.00%  [.] JS:*emit node:events:471:44
     3.00%  [.] Builtins_FulfillPromise
     3.00%  [.] v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>
     2.00%  [.] v8::internal::compiler::GraphReducer::ReduceTop()
     2.00%  [.] __memset_avx2_unaligned_erms
     2.00%  [.] v8::internal::JsonStringifier::SerializeString(v8::internal::Handle<v8::internal::String>)
     1.00%  [.] JS:* /srv/app/node_modules/.cache/tollroute-bench/billed-relay.mjs:141:63
    45.00%  [.] node::LibuvStreamWrap::OnUvRead
`;

test('a perf report is read as one share per symbol, kernel symbols marked, the header skipped', () => {
  const shares = parsePerfReport(REPORT);
  assert.equal(shares.length, 14);
  assert.deepEqual(shares[0], { percent: 10, kernel: true, symbol: '_raw_spin_unlock_irqrestore' });
  assert.deepEqual(shares[1], { percent: 8, kernel: false, symbol: 'sqlite3VdbeExec' });
});

// A perf report line, the relay's own code when it has one, and the part its samples belong to.
const SYMBOL_PARTS: [string, string | undefined, MachinePart][] = [
  ['1% [k] tcp_sendmsg', undefined, 'kernel (sockets, files, scheduling)'],
  ['1% [.] sqlite3VdbeExec', undefined, 'SQLite'],
  ['1% [.] walChecksumBytes', undefined, 'SQLite'],
  ['1% [.] __memset_avx2_unaligned_erms', undefined, 'libc (memory, copies)'],
  ['1% [.] JS:*run file:///srv/app/dist/pipeline/metered-call.js:82:23', undefined, "JIT code: the process's own"],
  ['1% [.] JS:*routeHandler /srv/app/node_modules/fastify/lib/route.js:465:25', undefined, 'JIT code: Fastify'],
  ['1% [.] JS:wasm-function[20]-20-turbofan', undefined, 'JIT code: undici and its HTTP parser'],
  ['1% [.] JS:*emit node:events:471:44', undefined, "JIT code: Node's core and other packages"],
  ['1% [.] JS:* /srv/app/node_modules/.cache/tollroute-bench/billed-relay.mjs:141:63', '/node_modules/.cache/tollroute-bench', "JIT code: the process's own"],
  ['1% [.] Builtins_LoadIC_Megamorphic', undefined, 'V8: property access (inline caches)'],
  ['1% [.] Builtins_FulfillPromise', undefined, 'V8: promises and async functions'],
  ['1% [.] Builtins_CallFunction_ReceiverIsAny', undefined, 'V8: calls and object construction'],
  ['1% [.] Builtins_FindOrderedHashMapEntry', undefined, 'V8: strings, JSON, maps and other builtins'],
  ['1% [.] v8::internal::ConcurrentMarking::RunMajor', undefined, 'V8: garbage collector'],
  ['1% [.] v8::internal::compiler::GraphReducer::ReduceTop()', undefined, 'V8: compilers'],
  ['1% [.] v8::internal::Runtime_DefineKeyedOwnPropertyInLiteral(int, unsigned long*, v8::internal::Isolate*)', undefined, 'V8: runtime (slow paths)'],
  ['1% [.] node::LibuvStreamWrap::OnUvRead', undefined, "Node's C++ and the rest"],
];

test('each symbol goes to the part of the machine that ran it', () => {
  for (const [line, ownCode, part] of SYMBOL_PARTS) assert.equal(machinePartOf(parsePerfReport(line)[0]!, ownCode), part, line);
});

test('the parts of a call add up to the CPU time a call, in proportion to their samples', () => {
  const parts = machinePartsPerCall(parsePerfReport(REPORT), 500, '/node_modules/.cache/tollroute-bench');
  const total = MACHINE_PARTS.reduce((sum, part) => sum + parts[part], 0);
  assert.ok(Math.abs(total - 500) < 1e-9);
  assert.ok(Math.abs(parts['kernel (sockets, files, scheduling)'] - 50) < 1e-9);
  assert.ok(Math.abs(parts["JIT code: the process's own"] - 30) < 1e-9); // 5 % and 1 % of 500 µs
  assert.equal(machinePartsPerCall([], 500).SQLite, 0);
});

test('the table puts the largest difference first and ends with the whole CPU a call', () => {
  const zero = noParts();
  const table = perfPartsTable(
    {
      scenario: 'chat-plain-c50',
      calls: { billed: 10, gateway: 10 },
      cpuMicrosPerCall: { billed: 300, gateway: 420 },
      parts: { billed: { ...zero, SQLite: 20, 'V8: compilers': 5 }, gateway: { ...zero, SQLite: 21, 'V8: compilers': 90 } },
    },
    'markdown',
  );
  const rows = table.split('\n').slice(2);
  assert.match(rows[0]!, /^\| V8: compilers \| 5\.0 \| 90\.0 \| 85\.0 \|$/);
  assert.match(rows[1]!, /^\| SQLite \| 20\.0 \| 21\.0 \| 1\.0 \|$/);
  assert.match(rows.at(-1)!, /^\| the whole CPU a call \(\/proc\) \| 300\.0 \| 420\.0 \| 120\.0 \|$/);
});
