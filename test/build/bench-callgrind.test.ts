// The instruction counts of `npm run bench -- --instructions` are read from callgrind_annotate's
// list of functions: each line's own cost goes to the part of the process it ran in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callInstructions, countsByPart, perCall } from '../../bench/callgrind.js';

const NODE = '/usr/bin/node';
const ANNOTATED = `--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
1,000,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                   file:function
--------------------------------------------------------------------------------
  390,000 (39.00%)  ???:Builtins_LoadIC [/usr/bin/node]
   10,000 ( 1.00%)  ???:v8::internal::Scavenger::EvacuateShortcutCandidate(v8::internal::Map) [/usr/bin/node]
  200,000 (20.00%)  ???:v8::internal::compiler::GraphReducer::ReduceTop() [/usr/bin/node]
  150,000 (15.00%)  ???:sqlite3VdbeExec [/work/main/node_modules/better-sqlite3/build/Release/better_sqlite3.node]
  100,000 (10.00%)  ???:0x000000000d2f48c0 [???]
   80,000 ( 8.00%)  ./malloc/./malloc/malloc.c:_int_malloc [/usr/lib/x86_64-linux-gnu/libc.so.6]
   30,000 ( 3.00%)  ???:v8::internal::MarkCompactCollector::CollectGarbage() [/usr/bin/node]
   50,000 ( 5.00%)  ???:std::_Rb_tree_increment(std::_Rb_tree_node_base const*) [/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30]
   20,000 ( 2.00%)  ./malloc/./malloc/arena.c:free
`;

test('each function line counts toward its part, and the program total is not counted again', () => {
  assert.deepEqual(countsByPart(ANNOTATED, NODE), {
    runtime: 400_000,
    compiler: 200_000,
    sqlite: 150_000,
    jit: 100_000,
    libc: 80_000,
    fullGc: 30_000,
    other: 70_000,
  });
});

test("a call's instructions leave the optimizing compilers and the full collections out", () => {
  assert.equal(callInstructions(countsByPart(ANNOTATED, NODE)), 800_000);
});

test('per call, what the process does idle in as long as the run is taken off first', () => {
  const idle = { jit: 10, runtime: 1_000, sqlite: 0, libc: 100, compiler: 0, fullGc: 0, other: 0 }; // over 1 s
  const load = { jit: 5_000, runtime: 12_000, sqlite: 3_000, libc: 700, compiler: 9_000, fullGc: 500, other: 10 }; // over 2 s, 10 calls
  assert.deepEqual(perCall(idle, 1_000, load, 2_000, 10), { jit: 498, runtime: 1_000, sqlite: 300, libc: 50, compiler: 900, fullGc: 50, other: 1 });
});
