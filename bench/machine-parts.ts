// A `perf report` of one process (Linux's sampling profiler, the kernel and every native library
// included, the JIT's code named from node's --perf-basic-prof map) split into the parts of a call
// that V8's own profiler cannot tell apart: V8's CPU profiler charges a native call (SQLite's
// statements, JSON's builtins, the inline caches' handlers) to the JavaScript that made it, and
// never sees the kernel or the collector's helper threads. Read with `perf report --sort sym`.

export const MACHINE_PARTS = [
  'kernel (sockets, files, scheduling)',
  'SQLite',
  'libc (memory, copies)',
  "JIT code: the process's own",
  'JIT code: Fastify',
  'JIT code: undici and its HTTP parser',
  "JIT code: Node's core and other packages",
  'V8: property access (inline caches)',
  'V8: promises and async functions',
  'V8: calls and object construction',
  'V8: strings, JSON, maps and other builtins',
  'V8: runtime (slow paths)',
  'V8: garbage collector',
  'V8: compilers',
  "Node's C++ and the rest",
] as const;
export type MachinePart = (typeof MACHINE_PARTS)[number];

/** One line of `perf report --no-children --sort sym -q -g none`: its share of the samples and its symbol. */
export interface SymbolShare {
  percent: number;
  /** `[k]` kernel or `[.]` user space. */
  kernel: boolean;
  symbol: string;
}

/** The symbols of a `perf report --sort sym` text (lines such as `  2.11%  [.] Builtins_LoadIC`). */
export function parsePerfReport(text: string): SymbolShare[] {
  const shares: SymbolShare[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s*([\d.]+)%\s+\[([.k])\]\s+(.+?)\s*$/.exec(line);
    if (match) shares.push({ percent: Number(match[1]), kernel: match[2] === 'k', symbol: match[3]! });
  }
  return shares;
}

const V8_COLLECTOR = /Scaveng|Marking|Sweep|Evacuat|Compactor|MemoryAllocator|Heap::|GCTracer|HeapObject::SizeFromMap|IterateObjectCache|IteratePointers/;
const V8_COMPILER = /compiler::|Maglev|Turbofan|turboshaft|CompileLazy|Compiler::|BytecodeGenerator|Parser::|Scanner::/;

/** The part a symbol's samples belong to; `ownCode` names a relay's own file (its JIT code is its own). */
export function machinePartOf(share: SymbolShare, ownCode?: string): MachinePart {
  const { symbol } = share;
  if (share.kernel) return 'kernel (sockets, files, scheduling)';
  if (symbol.startsWith('JS:') || symbol.startsWith('LazyCompile:')) return jitPartOf(symbol, ownCode);
  if (/^(sqlite3|wal|pager|btree|vdbe|pcache|unixRead|unixWrite|unixSync|releaseMemArray|getPageNormal)/i.test(symbol)) return 'SQLite';
  if (symbol.startsWith('Builtins_')) return builtinPartOf(symbol);
  if (V8_COLLECTOR.test(symbol)) return 'V8: garbage collector';
  if (V8_COMPILER.test(symbol)) return 'V8: compilers';
  if (
    /^v8::internal::Runtime_|^v8::internal::(LookupIterator|TransitionArray|JSObject|Map::|Object::|FeedbackNexus|IC::|LoadIC|StoreIC|KeyedStoreIC)/.test(
      symbol,
    )
  ) {
    return 'V8: runtime (slow paths)';
  }
  if (/Json|String|Factory|BinarySearch/.test(symbol) && symbol.startsWith('v8::')) return 'V8: strings, JSON, maps and other builtins';
  if (/^(__)?(mem|str|_int_|malloc|free|calloc|realloc|cfree|unlink_chunk|__libc|pthread_)/.test(symbol)) return 'libc (memory, copies)';
  if (symbol.startsWith('v8::')) return 'V8: runtime (slow paths)';
  return "Node's C++ and the rest";
}

function jitPartOf(symbol: string, ownCode: string | undefined): MachinePart {
  if (ownCode && symbol.includes(ownCode)) return "JIT code: the process's own";
  if (symbol.includes('/node_modules/')) {
    if (/\/node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify)\//.test(symbol)) return 'JIT code: Fastify';
    if (symbol.includes('/node_modules/undici/')) return 'JIT code: undici and its HTTP parser';
    return "JIT code: Node's core and other packages";
  }
  if (/wasm-function|wasm-to-js|js-to-wasm/.test(symbol)) return 'JIT code: undici and its HTTP parser'; // llhttp, undici's parser
  if (/\/dist\/|file:\/\//.test(symbol)) return "JIT code: the process's own";
  return "JIT code: Node's core and other packages";
}

function builtinPartOf(symbol: string): MachinePart {
  if (/IC(_|Trampoline|$)|ICTrampoline|LoadIC|StoreIC|HasIC|DefineKeyedOwnIC|DefineNamedOwnIC/.test(symbol)) return 'V8: property access (inline caches)';
  if (/Promise|Microtask|Await|Async|Generator/.test(symbol)) return 'V8: promises and async functions';
  if (
    /^Builtins_(Call|Construct|JSEntry|JSConstructStub|ArgumentsAdaptor|InterpreterEntry|BaselineOutOfLine|FastNewClosure|CreateShallow|FastNewObject)/.test(
      symbol,
    )
  ) {
    return 'V8: calls and object construction';
  }
  return 'V8: strings, JSON, maps and other builtins';
}

/** Every part at 0 µs. */
export const noParts = () => Object.fromEntries(MACHINE_PARTS.map((part) => [part, 0])) as Record<MachinePart, number>;

/** µs a call per part: each symbol's share of the samples times the process's CPU time a call. */
export function machinePartsPerCall(shares: SymbolShare[], cpuMicrosPerCall: number, ownCode?: string): Record<MachinePart, number> {
  const parts = noParts();
  const total = shares.reduce((sum, share) => sum + share.percent, 0);
  if (total === 0) return parts;
  for (const share of shares) parts[machinePartOf(share, ownCode)] += (share.percent / total) * cpuMicrosPerCall;
  return parts;
}
