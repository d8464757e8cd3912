// A commit's promise with its resolve and reject at hand, for the step that waits on it.

export interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A commit that fails is reported to each step's caller; with none waiting, it is not unhandled.
  promise.catch(() => {});
  return { promise, resolve, reject };
}
