// The account's API keys: create one, with limits if wanted (its secret shown this once), change a
// key's limits, revoke one after confirming.
import { useRef, useState } from 'preact/hooks';
import { type ApiKey, api, type Model } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { EditLimitsDialog } from '../components/EditLimitsDialog';
import { KeyLimitFields } from '../components/KeyLimitFields';
import { KeyLimitsSummary } from '../components/KeyLimitsSummary';
import { KeyTable, keyLabel } from '../components/KeyTable';
import { Failure } from '../components/Notice';
import { draftOf, limitChanges, NO_LIMITS } from '../key-limits';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';
// The page's own rules, beside the shared sheet (styles.css); Vite bundles both into one file.
import '../keys.css';

const KEYS = '/v1/account/keys';
const MODELS = '/v1/account/models';

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
  // The models a key may be limited to (the catalogue, as /v1/models lists it for keys), read
  // only once a form that offers them opens: most visits to the page never need them.
  const [modelsWanted, setModelsWanted] = useState(false);
  const models = useLoad(() => (modelsWanted ? api<{ data: Model[] }>('GET', MODELS) : Promise.resolve(undefined)), [modelsWanted]);
  const [name, setName] = useState('');
  const [limits, setLimits] = useState(() => draftOf(NO_LIMITS));
  const [created, setCreated] = useState<ApiKey & { key: string }>();
  const [revoking, setRevoking] = useState<ApiKey>();
  const [editing, setEditing] = useState<ApiKey>();
  const { failure, setFailure, act } = useAction(reload);
  const create = (event: Event) => {
    event.preventDefault();
    // Only the limits filled in are sent: a new key has none of the others.
    const changes = limitChanges(limits);
    if ('error' in changes) return setFailure(changes.error);
    void act(async () => {
      setCreated(await api<ApiKey & { key: string }>('POST', KEYS, { name: name.trim(), ...changes.body }));
      setName('');
      setLimits(draftOf(NO_LIMITS));
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
      <Failure message={failure ?? error ?? models.error} />
      <form class="new-key" onSubmit={create}>
        <div class="field">
          <label for="key-name">Name of a new key</label>
          <input id="key-name" required maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <details onToggle={(event) => event.currentTarget.open && setModelsWanted(true)}>
          <summary>Limits (optional)</summary>
          <KeyLimitFields draft={limits} onChange={setLimits} models={models.data?.data} />
        </details>
        <button type="submit">Create key</button>
      </form>
      {created && <NewKey created={created} />}
      {data && (
        <KeyTable
          keys={data.data}
          detail={{ heading: 'Limits', wrap: true, cell: (key) => <KeyLimitsSummary apiKey={key} /> }}
          actions={(key) => (
            <div class="row-actions">
              <button
                type="button"
                onClick={() => {
                  setModelsWanted(true);
                  setEditing(key);
                }}
                aria-label={`Edit limits of key ${keyLabel(key)}`}
              >
                Edit limits
              </button>
              <button type="button" class="danger" onClick={() => setRevoking(key)} aria-label={`Revoke key ${keyLabel(key)}`}>
                Revoke
              </button>
            </div>
          )}
        />
      )}
      <EditLimitsDialog
        apiKey={editing}
        models={models.data?.data}
        onClose={() => setEditing(undefined)}
        onSaved={() => {
          setEditing(undefined);
          reload();
        }}
      />
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
