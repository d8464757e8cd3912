// Long prompt texts counted in a worker thread, off the event loop. The byte-pair encoding of a
// megabyte of prompt takes the tokenizer 50 to 100 ms of CPU: on the event loop, every other call
// in flight would wait that long for a hold it did not need (docs/performance.md, "What limits each
// figure"). The call whose prompt it is waits for its count either way; the others do not.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { countTokens, rememberPromptTokens, TOKENIZERS, type TokenizerName } from './tokens.js';

// Plain CommonJS, so the same code runs from src/ (under tsx) and from dist/. It loads an
// encoding on its first text of it, as the event loop's side does.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const loaded = new Map();
parentPort.on('message', ({ id, text, tokenizer }) => {
  try {
    let count = loaded.get(tokenizer);
    if (!count) {
      count = require(workerData.encodings[tokenizer]).countTokens;
      loaded.set(tokenizer, count);
    }
    parentPort.postMessage({ id, count: count(text) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
});
`;

const require = createRequire(import.meta.url);
/** Where the worker loads each encoding from: resolved when it starts, not at every start-up. */
const encodingFiles = () => Object.fromEntries(TOKENIZERS.map((name) => [name, require.resolve(`gpt-tokenizer/encoding/${name}`)]));

interface Pending {
  resolve(count: number): void;
  reject(error: Error): void;
}

/** The worker and the counts it owes: a worker that fails or stops takes only its own with it. */
interface TokenWorker {
  thread: Worker;
  pending: Map<number, Pending>;
}

let current: TokenWorker | undefined;
let nextId = 0;

/** The worker, started on the first long text. It keeps the process alive only while it has counts to make. */
function started(): TokenWorker {
  if (current) return current;
  const thread = new Worker(WORKER_SOURCE, { eval: true, workerData: { encodings: encodingFiles() } });
  const created: TokenWorker = { thread, pending: new Map() };
  const { pending } = created;
  thread.on('message', ({ id, count, error }: { id: number; count?: number; error?: string }) => {
    const waiting = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) thread.unref();
    if (error === undefined) waiting?.resolve(count!);
    else waiting?.reject(new Error(error));
  });
  // Its counts are then made here instead (countLongText).
  const lost = (error: Error) => {
    if (current === created) current = undefined;
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  thread.on('error', lost);
  thread.on('exit', () => lost(new Error('the token worker stopped')));
  thread.unref(); // after its listeners, which would refer it again
  current = created;
  return created;
}

/**
 * A long prompt text's token count, made in the worker and remembered as any prompt's is. Should
 * the worker fail, the text is counted here: a hold is never sized on a guess.
 */
export function countLongText(text: string, tokenizer: TokenizerName): Promise<number> {
  const id = nextId++;
  const counted = new Promise<number>((resolve, reject) => {
    const { thread, pending } = started();
    pending.set(id, { resolve, reject });
    thread.ref(); // until its last count is in
    thread.postMessage({ id, text, tokenizer });
  });
  return counted.then(
    (count) => rememberPromptTokens(text, tokenizer, count),
    () => countTokens(text, tokenizer),
  );
}

/** Stops the worker (at shutdown, and in tests); the next long text starts another. */
export async function stopTokenWorker(): Promise<void> {
  const stopping = current;
  if (!stopping) return;
  current = undefined;
  await stopping.thread.terminate();
}
