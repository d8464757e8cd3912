// Credits the account. The amount is typed in currency units and turned into integer micros by
// string arithmetic (money.ts parseUnits), so 0.1 is exactly 100 000 micros, never 99 999.
import { useState } from 'preact/hooks';
import { messageOf } from '../../api';
import { Failure } from '../../components/Notice';
import { formatMicros, parseUnits } from '../../money';
import { type Admin, accountPath } from './admin-api';

export function CreditForm({ admin, id, onCredited }: { admin: Admin; id: string; onCredited: () => void }) {
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const [failure, setFailure] = useState<string>();
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const micros = parseUnits(amount);

  const credit = async (event: Event) => {
    event.preventDefault();
    setFailure(undefined);
    setDone('');
    if (micros === undefined) {
      setFailure('Amount: a positive number with at most six decimals, such as 12.50.');
      return;
    }
    setBusy(true);
    try {
      await admin.post(accountPath(id, '/credit'), note.trim() ? { amount_micros: micros, note: note.trim() } : { amount_micros: micros });
      setDone(`Credited ${formatMicros(micros)}.`);
      setAmount('');
      setNote('');
      onCredited();
    } catch (caught) {
      setFailure(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h2>Add credit</h2>
      <form class="filters" onSubmit={credit}>
        <div class="field">
          <label for="credit-amount">Amount (units)</label>
          <input
            id="credit-amount"
            inputMode="decimal"
            autocomplete="off"
            required
            placeholder="12.50"
            aria-describedby="credit-micros"
            value={amount}
            onInput={(event) => setAmount(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="credit-note">Note (kept on the ledger)</label>
          <input id="credit-note" maxLength={500} value={note} onInput={(event) => setNote(event.currentTarget.value)} />
        </div>
        <button type="submit" disabled={busy}>
          Add credit
        </button>
      </form>
      <p id="credit-micros" class="hint">
        {micros === undefined ? 'Whole units and up to six decimals.' : `= ${micros.toLocaleString('en-US')} micros`}
      </p>
      <Failure message={failure} />
      <p class="status" role="status">
        {done}
      </p>
    </section>
  );
}
