// The account's API keys as the operator sees them: issue one (shown this once), revoke one after
// confirming. Only prefixes are listed; the gateway keeps nothing more of a key.
import { useRef, useState } from 'preact/hooks';
import type { ApiKey } from '../../api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { CopyButton } from '../../components/CopyButton';
import { KeyTable, keyLabel } from '../../components/KeyTable';
import { Failure } from '../../components/Notice';
import { useAction } from '../../use-action';
import { useLoad } from '../../use-load';
import { type Admin, accountPath } from './admin-api';

type Issued = { id: string; key: string; prefix: string; name: string | null };

function IssuedKey({ issued }: { issued: Issued }) {
  const field = useRef<HTMLInputElement>(null);
  return (
    <div class="secret" aria-live="polite">
      <h3>Key {issued.name ? `“${issued.name}” ` : ''}issued</h3>
      <p>Give it to the account’s holder now: it is not shown again.</p>
      <label for="issued-key">Issued API key</label>
      <input id="issued-key" ref={field} readOnly value={issued.key} />
      <CopyButton text={issued.key} label="Copy the issued API key" field={() => field.current} />
    </div>
  );
}

export function AccountKeys({ admin, id }: { admin: Admin; id: string }) {
  const { data, error, reload } = useLoad(() => admin.get<{ data: ApiKey[] }>(accountPath(id, '/keys')), [id]);
  const [name, setName] = useState('');
  const [rpm, setRpm] = useState('');
  const [issued, setIssued] = useState<Issued>();
  const [revoking, setRevoking] = useState<ApiKey>();
  const { failure, act } = useAction(reload);
  const issue = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const body = { ...(name.trim() && { name: name.trim() }), ...(rpm && { rpm: Number(rpm) }) };
      setIssued(await admin.post<Issued>(accountPath(id, '/keys'), body));
      setName('');
      setRpm('');
    });
  };
  const revoke = (key: ApiKey) => {
    setRevoking(undefined);
    void act(async () => {
      await admin.del(`/admin/keys/${encodeURIComponent(key.id)}`);
    });
  };

  return (
    <section>
      <h2>API keys</h2>
      <Failure message={failure ?? error} />
      <form class="filters" onSubmit={issue}>
        <div class="field">
          <label for="admin-key-name">Key name</label>
          <input id="admin-key-name" maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="admin-key-rpm">Requests per minute (blank: the default)</label>
          <input id="admin-key-rpm" type="number" min={1} step={1} value={rpm} onInput={(event) => setRpm(event.currentTarget.value)} />
        </div>
        <button type="submit">Issue key</button>
      </form>
      {issued && <IssuedKey issued={issued} />}
      {data && data.data.length === 0 && <p>No keys yet.</p>}
      {data && data.data.length > 0 && (
        <KeyTable
          keys={data.data}
          caption="Keys of this account"
          detail={{ heading: 'RPM', cell: (key) => key.rpm ?? 'default' }}
          actions={(key) => (
            <button type="button" class="danger" onClick={() => setRevoking(key)} aria-label={`Revoke key ${keyLabel(key)}`}>
              Revoke
            </button>
          )}
        />
      )}
      <ConfirmDialog
        open={revoking !== undefined}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        onConfirm={() => revoking && revoke(revoking)}
        onCancel={() => setRevoking(undefined)}
      >
        <p>
          Key <code>{revoking?.prefix}…</code> ({revoking?.name ?? 'no name'}) is refused from now on, on every instance. This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}
