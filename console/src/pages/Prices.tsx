// Models and prices: every model the account may call, with its prices under the account's plan.
// The common dimensions have a column each; the rest, and long-context prices, go in the details.
import { useState } from 'preact/hooks';
import { api, type Model, type ModelPricing, type PricingKey, type PricingRates } from '../api';
import { Choice } from '../components/Choice';
import { Failure } from '../components/Notice';
import { PRICING_LABELS, perWhat, shownRate } from '../price-format';
import { useLoad } from '../use-load';
// The page's own rules, beside the shared sheet (styles.css); Vite bundles both into one file.
import '../prices.css';

const COLUMNS: { key: PricingKey; heading: string }[] = [
  { key: 'prompt', heading: 'Input' },
  { key: 'input_cache_read', heading: 'Cached input' },
  { key: 'completion', heading: 'Output' },
  { key: 'request', heading: 'Per request' },
];
const IN_COLUMNS = new Set(COLUMNS.map((column) => column.key));
const ORDER = Object.keys(PRICING_LABELS) as PricingKey[];

/** The dimensions a set of rates gives, in the page's order. */
const pricedKeys = (rates: PricingRates): PricingKey[] => ORDER.filter((key) => rates[key] !== undefined);

/** One rate: its figure (marked for tests and screen readers by its dimension) and what it is per. */
function Rate({ name, rates, label }: { name: PricingKey; rates: PricingRates; label?: boolean }) {
  return (
    <>
      {label && `${PRICING_LABELS[name]} `}
      <span class="amount" data-unit={name}>
        {shownRate(name, rates[name]!)}
      </span>
      {label && ` ${perWhat(name)}`}
    </>
  );
}

function Details({ pricing }: { pricing: ModelPricing }) {
  const others = pricedKeys(pricing).filter((key) => !IN_COLUMNS.has(key));
  return (
    <ul class="price-details">
      {others.map((key) => (
        <li key={key}>
          <Rate name={key} rates={pricing} label />
        </li>
      ))}
      {pricing.tiers?.map((tier) => (
        <li key={tier.above_input_tokens} data-tier={tier.above_input_tokens}>
          past {tier.above_input_tokens.toLocaleString('en-US')} input tokens:{' '}
          {pricedKeys(tier).map((key, i) => (
            <span key={key}>
              {i > 0 && ', '}
              <Rate name={key} rates={tier} label />
            </span>
          ))}
        </li>
      ))}
    </ul>
  );
}

function ModelRow({ model }: { model: Model }) {
  const { pricing } = model;
  return (
    <tr data-model={model.id}>
      <th scope="row">{model.id}</th>
      <td data-column="type">{model.model_type}</td>
      {pricing === undefined ? (
        <td colSpan={COLUMNS.length + 1} class="unpriced">
          not priced
        </td>
      ) : (
        <>
          {COLUMNS.map(({ key }) => (
            <td key={key} class="number">
              {pricing[key] === undefined ? '—' : <Rate name={key} rates={pricing} />}
            </td>
          ))}
          <td class="detail">{pricedKeys(pricing).length === 0 ? 'no charge' : <Details pricing={pricing} />}</td>
        </>
      )}
    </tr>
  );
}

export function Prices() {
  const { data, error } = useLoad(() => api<{ data: Model[] }>('GET', '/v1/account/models'));
  const [type, setType] = useState('');
  const models = data?.data ?? [];
  const types = [...new Set(models.map((model) => model.model_type))].sort();
  const shown = models.filter((model) => type === '' || model.model_type === type);
  return (
    <>
      <h1>Models and prices</h1>
      <p>Prices in your balance’s unit under your plan: per million tokens for tokens, else per request, search, image, character or second.</p>
      <Failure message={error} />
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Choice id="prices-type" label="Type" options={types} value={type} onChange={setType} />
      </form>
      {data && (
        <div class="table prices">
          <table>
            <caption>Models the account may call</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Type</th>
                {COLUMNS.map(({ key, heading }) => (
                  <th key={key} scope="col" class="number">
                    {heading}
                    {key !== 'request' && <span class="hint"> {perWhat(key)}</span>}
                  </th>
                ))}
                <th scope="col">Other prices</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((model) => (
                <ModelRow key={model.id} model={model} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
