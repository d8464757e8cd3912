// The account's API keys: create one (its secret shown this once), revoke one after confirming.
import { useRef, useState } from 'preact/hooks';
import { ApiError, type ApiKey, api } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { Failure } from '../components/Notice';
import { formatTime } from '../format';
import { useLoad } from '../use-load';

const KEYS = '/v1/account/keys';

function NewKey({ created }: { created: ApiKey & { key: string } }) {
  const field = useRef<HTMLInputElement>(null);
  return (
    <section class="secret" aria-live="polite">
      <h2>Key “{created.name}” created</h2>
      <p>Store it now: it is not shown again.</p>
      <label for="new-key">New API key</label>
      <input id="new-key" ref={field} readOnly value={created.key} />
      <CopyButton text={created.key} label="Copy the new API key" field={() => field.current} />
    </section>
  );
}

export function Keys() {
  const { data, error, reload } = useLoad(() => api<{ data: ApiKey[] }>('GET', KEYS));
  const [name, setName] = useState('');
  const [created, setCreated] = useState<ApiKey & { key: string }>();
  const [revoking, setRevoking] = useState<ApiKey>();
  const [failure, setFailure] = useState<string>();

  const act = async (action: () => Promise<void>) => {
    setFailure(undefined);
    try {
      await action();
    } catch (caught) {
      setFailure(caught instanceof ApiError ? caught.message : String(caught));
    }
    reload();
  };
  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      setCreated(await api<ApiKey & { key: string }>('POST', KEYS, { name: name.trim() }));
      setName('');
    });
  };
  const revoke = (key: ApiKey) => {
    setRevoking(undefined);
    void act(async () => {
      await api('DELETE', `${KEYS}/${encodeURIComponent(key.id)}`);
    });
  };

  return (
    <>
      <h1>API keys</h1>
      <Failure message={failure ?? error} />
      <form class="inline" onSubmit={create}>
        <label for="key-name">Name of a new key</label>
        <input id="key-name" required maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)} />
        <button type="submit">Create key</button>
      </form>
      {created && <NewKey created={created} />}
      {data && (
        <div class="table">
          <table>
            <thead>
              <tr>
                <th scope="col">Prefix</th>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((key) => (
                <tr key={key.id} data-key-id={key.id}>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>{key.name ?? '—'}</td>
                  <td>{formatTime(key.created_at)}</td>
                  <td>{formatTime(key.last_used_at)}</td>
                  <td>
                    {key.revoked_at !== null ? (
                      `revoked ${formatTime(key.revoked_at)}`
                    ) : (
                      <button type="button" class="danger" onClick={() => setRevoking(key)} aria-label={`Revoke key ${key.prefix} (${key.name ?? 'no name'})`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ConfirmDialog
        open={revoking !== undefined}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        onConfirm={() => revoking && revoke(revoking)}
        onCancel={() => setRevoking(undefined)}
      >
        <p>
          Key <code>{revoking?.prefix}…</code> ({revoking?.name ?? 'no name'}) is refused from now on. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
