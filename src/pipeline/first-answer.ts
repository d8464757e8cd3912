// What a metered call waits for before anything reaches its caller: a stream's hold's commit, when
// it is still being written, and a stream's first data.
import type { Readable } from 'node:stream';
import type { MeteredAnswer } from './types.js';

/**
 * Resolves once the stream has data to read; rejects if it fails, ends empty or is destroyed first
 * (an empty 200 delivered nothing, so it is a failed call, not a billable one).
 */
export function firstData(body: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      body.off('readable', onReadable);
      body.off('error', done);
      body.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    // 'readable' fires when data is buffered, or at the end: nothing buffered then means empty.
    const onReadable = () => done(body.readableLength > 0 ? undefined : new Error('the upstream stream ended without data'));
    // Destroyed without an error (its 'error' comes before 'close' when there is one): never a wait without end.
    const onClose = () => done(new Error('the upstream stream closed before its first data'));
    body.on('readable', onReadable);
    body.once('error', done);
    body.once('close', onClose);
  });
}

/**
 * Waits for the hold's commit. If the commit fails, the hold was never written: the call already
 * under way is dropped unseen (nothing reached the caller, nothing is billed) and the store's
 * failure is the answer.
 */
export async function holdCommitted(committed: Promise<void>, serving: Promise<{ result: MeteredAnswer }>, abandonHold: () => void) {
  try {
    await committed;
  } catch (error) {
    abandonHold();
    serving.then(
      ({ result }) => result.kind === 'stream' && result.body.destroy(),
      () => {},
    );
    throw error;
  }
}
