// Settings → Low balance: the threshold below which the account is told (one signed
// account.balance_low event to the webhook URL per crossing, and the console's banner), and that URL.
import { useState } from 'preact/hooks';
import { type AccountSettings, api } from '../api';
import { formatMicros, parseUnits } from '../money';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';
import { Failure } from './Notice';

const SETTINGS = '/v1/account/settings';

/** What the holder typed as the threshold: empty is off, `0` is zero, else units to micros. */
function thresholdOf(text: string): number | null | undefined {
  if (text.trim() === '') return null;
  if (/^0+(\.0*)?$/.test(text.trim())) return 0;
  return parseUnits(text);
}

export function LowBalanceForm() {
  const { data, error, reload } = useLoad(() => api<AccountSettings>('GET', SETTINGS));
  const { failure, setFailure, act } = useAction(reload);
  const [threshold, setThreshold] = useState<string>();
  const [url, setUrl] = useState<string>();
  const [saved, setSaved] = useState(false);
  // The fields start from what is stored, until the holder types.
  const thresholdText = threshold ?? (data?.low_balance_micros == null ? '' : formatMicros(data.low_balance_micros));
  const urlText = url ?? data?.webhook_url ?? '';

  const save = (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const micros = thresholdOf(thresholdText);
    if (micros === undefined) return setFailure('Threshold: an amount such as 5 or 12.50, or empty for none.');
    void act(async () => {
      await api<AccountSettings>('PATCH', SETTINGS, { low_balance_micros: micros, webhook_url: urlText.trim() === '' ? null : urlText.trim() });
      setThreshold(undefined);
      setUrl(undefined);
      setSaved(true);
    });
  };

  return (
    <section>
      <h2>Low balance</h2>
      <p>
        When the balance falls below the threshold, a signed <code>account.balance_low</code> event is sent to the webhook URL, once per crossing, and the
        console shows a banner. A top-up back to the threshold makes the next crossing send again.
      </p>
      <Failure message={failure ?? error} />
      <form class="inline" onSubmit={save}>
        <label for="low-balance-threshold">Threshold</label>
        <input id="low-balance-threshold" inputMode="decimal" placeholder="none" value={thresholdText} onInput={(e) => setThreshold(e.currentTarget.value)} />
        <label for="account-webhook-url">Webhook URL</label>
        <input id="account-webhook-url" type="url" placeholder="https://example.com/hooks" value={urlText} onInput={(e) => setUrl(e.currentTarget.value)} />
        <button type="submit">Save</button>
      </form>
      <p role="status">{saved && 'Saved.'}</p>
    </section>
  );
}
