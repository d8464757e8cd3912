// Loads what a page shows, and reloads it on demand (after a change) or when its inputs change.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { messageOf } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  /** True until the answer for the current inputs is in; data is the previous answer meanwhile. */
  loading: boolean;
  reload: () => void;
}

interface Answer<T> {
  /** The inputs the answer is for. */
  key?: string;
  data?: T;
  error?: string;
}

export function useLoad<T>(load: () => Promise<T>, inputs: unknown[] = []): Loaded<T> {
  const [round, setRound] = useState(0);
  const [answer, setAnswer] = useState<Answer<T>>({});
  // Compared while rendering, not set by the effect (which runs after the paint), so a page never
  // shows the previous answer as the current one.
  const key = JSON.stringify([round, ...inputs]);
  // The key stands for the inputs: the load runs again when it changes.
  useEffect(() => {
    let current = true;
    load().then(
      (data) => current && setAnswer({ key, data }),
      (failure: unknown) => current && setAnswer((previous) => ({ key, data: previous.data, error: messageOf(failure) })),
    );
    return () => {
      current = false;
    };
  }, [key]);
  return { data: answer.data, error: answer.error, loading: answer.key !== key, reload: useCallback(() => setRound((n) => n + 1), []) };
}
