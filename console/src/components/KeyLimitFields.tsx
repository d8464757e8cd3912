// The fields of a key's limits, shared by the new-key form and the Edit limits dialog. Every field
// blank (and no model checked) is no limit; the form's owner turns the draft into the API's body.
import { useId } from 'preact/hooks';
import type { Model } from '../api';
import type { LimitDraft } from '../key-limits';

export interface KeyLimitFieldsProps {
  draft: LimitDraft;
  onChange: (draft: LimitDraft) => void;
  /** The models the gateway serves; undefined while they load. */
  models: Model[] | undefined;
}

export function KeyLimitFields({ draft, onChange, models }: KeyLimitFieldsProps) {
  const id = useId();
  const set = (change: Partial<LimitDraft>) => onChange({ ...draft, ...change });
  // A model the key already names stays offered even if the gateway stopped serving it, so the
  // form shows the key as it is.
  const offered = [...new Set([...(models ?? []).map((model) => model.id), ...draft.models])];
  const toggle = (model: string, checked: boolean) => set({ models: checked ? [...draft.models, model] : draft.models.filter((allowed) => allowed !== model) });
  const text = (name: 'dailyCap' | 'monthlyCap', label: string) => (
    <div class="field">
      <label for={`${id}-${name}`}>{label}</label>
      <input
        id={`${id}-${name}`}
        inputMode="decimal"
        placeholder="none"
        autoComplete="off"
        value={draft[name]}
        onInput={(event) => set({ [name]: event.currentTarget.value })}
      />
    </div>
  );

  return (
    <div class="limit-fields">
      <fieldset class="models">
        <legend>Allowed models (none checked: any model)</legend>
        {models === undefined && <p class="hint">Loading the models…</p>}
        {offered.map((model) => (
          <label key={model} class="check">
            <input type="checkbox" checked={draft.models.includes(model)} onChange={(event) => toggle(model, event.currentTarget.checked)} />
            {model}
          </label>
        ))}
      </fieldset>
      <div class="limit-numbers">
        {text('dailyCap', 'Daily spend cap (UTC day)')}
        {text('monthlyCap', 'Monthly spend cap (UTC month)')}
        <div class="field">
          <label for={`${id}-expires`}>Expires (UTC; blank: never)</label>
          <input id={`${id}-expires`} type="datetime-local" value={draft.expires} onInput={(event) => set({ expires: event.currentTarget.value })} />
        </div>
        <div class="field">
          <label for={`${id}-rpm`}>Requests per minute (blank: default)</label>
          <input id={`${id}-rpm`} type="number" min={1} step={1} value={draft.rpm} onInput={(event) => set({ rpm: event.currentTarget.value })} />
        </div>
      </div>
    </div>
  );
}
