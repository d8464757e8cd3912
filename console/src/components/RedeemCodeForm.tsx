// Redeems a redemption code (trc-…) for the signed-in account, then says what it credited and the
// balance after it. The API's refusals (unknown, already redeemed, expired, too many wrong tries)
// are shown in its own words.
import { useState } from 'preact/hooks';
import { api, messageOf, type Redemption } from '../api';
import { formatMicros } from '../money';
import { Failure } from './Notice';

export function RedeemCodeForm({ onRedeemed }: { onRedeemed: (redemption: Redemption) => void }) {
  const [code, setCode] = useState('');
  const [failure, setFailure] = useState<string>();
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);

  const redeem = async (event: Event) => {
    event.preventDefault();
    setFailure(undefined);
    setDone('');
    setBusy(true);
    try {
      const redemption = await api<Redemption>('POST', '/v1/account/redemptions', { code: code.trim() });
      setDone(`Credited ${formatMicros(redemption.amount_micros)}. Balance now ${formatMicros(redemption.balance_micros)}.`);
      setCode('');
      onRedeemed(redemption);
    } catch (caught) {
      setFailure(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h2>Redeem a code</h2>
      <form class="filters" onSubmit={redeem}>
        <div class="field">
          <label for="redeem-code">Redemption code</label>
          <input
            id="redeem-code"
            autocomplete="off"
            spellcheck={false}
            required
            maxLength={100}
            size={34}
            placeholder="trc-…"
            value={code}
            onInput={(event) => setCode(event.currentTarget.value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Redeem
        </button>
      </form>
      <Failure message={failure} />
      <p class="status" role="status">
        {done}
      </p>
    </section>
  );
}
