// Settings → Webhook: the secret that signs the account's callbacks, hidden until revealed, copied,
// or rotated after confirming (every attempt from then on is signed with the new one); and a
// signed test event sent to a URL.
import { useRef, useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { LowBalanceForm } from '../components/LowBalanceForm';
import { Failure } from '../components/Notice';
import { TestEventForm } from '../components/TestEventForm';
import { useLoad } from '../use-load';

const SECRET = '/v1/account/webhook-secret';

export function Settings() {
  const { data, error } = useLoad(() => api<{ secret: string }>('GET', SECRET));
  const [rotated, setRotated] = useState<string>();
  const [shown, setShown] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [failure, setFailure] = useState<string>();
  const field = useRef<HTMLInputElement>(null);
  const secret = rotated ?? data?.secret;

  const rotate = async () => {
    setConfirming(false);
    setFailure(undefined);
    try {
      setRotated((await api<{ secret: string }>('POST', SECRET)).secret);
      setShown(true);
    } catch (caught) {
      setFailure(messageOf(caught));
    }
  };

  return (
    <>
      <h1>Settings</h1>
      <section>
        <h2>Webhook signing secret</h2>
        <p>
          Task callbacks carry an <code>X-Service-Signature</code> made with this secret.
        </p>
        <Failure message={failure ?? error} />
        {secret !== undefined && (
          <div class="secret-row">
            <label for="webhook-secret">Webhook secret</label>
            <input id="webhook-secret" ref={field} readOnly type={shown ? 'text' : 'password'} value={secret} />
            <button type="button" aria-pressed={shown} onClick={() => setShown(!shown)}>
              {shown ? 'Hide' : 'Reveal'}
            </button>
            <CopyButton text={secret} label="Copy the webhook secret" field={() => (shown ? field.current : null)} />
            <button type="button" class="danger" onClick={() => setConfirming(true)}>
              Rotate
            </button>
          </div>
        )}
      </section>
      <TestEventForm />
      <LowBalanceForm />
      <ConfirmDialog open={confirming} title="Rotate the webhook secret?" confirmLabel="Rotate secret" onConfirm={rotate} onCancel={() => setConfirming(false)}>
        <p>Callbacks are signed with a new secret from now on, retries included; receivers checking the old one will refuse them.</p>
      </ConfirmDialog>
    </>
  );
}
