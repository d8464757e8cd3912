// Changes a key's limits in a native modal <dialog> (focus kept inside, Escape cancels, focus
// returns to the Edit button). Only the fields changed are sent; a field cleared removes its limit.
// The API's refusal (a 400 naming the field, the 403 of a session whose own key has limits) is
// shown inside the dialog, which stays open to correct it.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { type ApiKey, api, type Model, messageOf } from '../api';
import { draftOf, limitChanges } from '../key-limits';
import { KeyLimitFields } from './KeyLimitFields';
import { Failure } from './Notice';

export interface EditLimitsDialogProps {
  /** The key being edited; undefined while the dialog is closed. */
  apiKey: ApiKey | undefined;
  models: Model[] | undefined;
  onClose: () => void;
  onSaved: () => void;
}

function EditLimitsForm({ apiKey, models, onClose, onSaved, titleId }: EditLimitsDialogProps & { apiKey: ApiKey; titleId: string }) {
  const [draft, setDraft] = useState(() => draftOf(apiKey));
  const [failure, setFailure] = useState<string>();
  const [saving, setSaving] = useState(false);

  const save = async (event: Event) => {
    event.preventDefault();
    const changes = limitChanges(draft, apiKey);
    if ('error' in changes) return setFailure(changes.error);
    if (Object.keys(changes.body).length === 0) return onClose();
    setFailure(undefined);
    setSaving(true);
    try {
      await api('PATCH', `/v1/account/keys/${encodeURIComponent(apiKey.id)}`, changes.body);
      onSaved();
    } catch (caught) {
      setFailure(messageOf(caught));
    } finally {
      setSaving(false);
    }
  };

  return (
    <form onSubmit={save}>
      <h2 id={titleId}>
        Limits of key <code>{apiKey.prefix}…</code> ({apiKey.name ?? 'no name'})
      </h2>
      <p class="hint">Clear a field to remove its limit. Changes apply from the key’s next request.</p>
      <Failure message={failure} />
      <KeyLimitFields draft={draft} onChange={setDraft} models={models} />
      <div class="actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" disabled={saving}>
          Save limits
        </button>
      </div>
    </form>
  );
}

export function EditLimitsDialog(props: EditLimitsDialogProps) {
  const { apiKey, onClose } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (apiKey && !element.open) element.showModal();
    if (!apiKey && element.open) element.close();
  }, [apiKey]);
  return (
    <dialog ref={dialog} class="edit-limits" aria-labelledby={titleId} onCancel={onClose} onClose={() => apiKey && onClose()}>
      {/* Mounted afresh at each opening, so the form starts from the key as it is now. */}
      {apiKey && <EditLimitsForm key={apiKey.id} {...props} apiKey={apiKey} titleId={titleId} />}
    </dialog>
  );
}
