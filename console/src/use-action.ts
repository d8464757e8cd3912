// A page's actions (issue, revoke, …): each clears the last failure, runs, shows its own failure
// as the API's message, and then reads the page's data again, whether it worked or not.
import { useState } from 'preact/hooks';
import { messageOf } from './api';

export function useAction(reload: () => void) {
  const [failure, setFailure] = useState<string>();
  const act = async (action: () => Promise<void>) => {
    setFailure(undefined);
    try {
      await action();
    } catch (caught) {
      setFailure(messageOf(caught));
    }
    reload();
  };
  return { failure, setFailure, act };
}
