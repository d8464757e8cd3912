// Usage rows in pages, filtered by time, model and endpoint, and the same filter as a CSV download.
import { useState } from 'preact/hooks';
import { query, type UsageRow } from '../api';
import { Failure } from '../components/Notice';
import { Pager } from '../components/Pager';
import { formatTime, formatUnits } from '../format';
import { formatMicros } from '../money';
import { usePages } from '../use-pages';

interface Filter {
  from: string;
  to: string;
  model: string;
  endpoint: string;
}

const EMPTY: Filter = { from: '', to: '', model: '', endpoint: '' };

/** A date input's day (`YYYY-MM-DD`) as the API's instant: the start of that UTC day. */
const dayStart = (day: string) => (day === '' ? undefined : `${day}T00:00:00Z`);

/** The API's filter; `to` is exclusive, so the last day chosen is counted whole. */
function filterQuery(filter: Filter) {
  const to = filter.to === '' ? undefined : new Date(Date.parse(`${filter.to}T00:00:00Z`) + 86_400_000).toISOString();
  return { from: dayStart(filter.from), to, model: filter.model.trim(), endpoint: filter.endpoint.trim() };
}

export function Usage() {
  const [draft, setDraft] = useState<Filter>(EMPTY);
  const [filter, setFilter] = useState<Filter>(EMPTY);
  const pages = usePages<UsageRow>('/v1/account/usage', filterQuery(filter));
  const { page: data, error, loading } = pages;

  const apply = (event: Event) => {
    event.preventDefault();
    setFilter(draft);
  };
  const field = (name: keyof Filter, label: string, type: 'date' | 'text') => (
    <div class="field">
      <label for={`filter-${name}`}>{label}</label>
      <input id={`filter-${name}`} type={type} value={draft[name]} onInput={(event) => setDraft({ ...draft, [name]: event.currentTarget.value })} />
    </div>
  );

  return (
    <>
      <h1>Usage</h1>
      <form class="filters" onSubmit={apply}>
        {field('from', 'From (UTC day)', 'date')}
        {field('to', 'To (UTC day, included)', 'date')}
        {field('model', 'Model', 'text')}
        {field('endpoint', 'Endpoint', 'text')}
        <button type="submit">Apply filter</button>
      </form>
      <p>
        <a href={`/v1/account/usage${query({ ...filterQuery(filter), format: 'csv' })}`} download="usage.csv">
          Download CSV (every row of this filter)
        </a>
      </p>
      <Failure message={error} />
      {data && (
        <>
          <div class="table" aria-busy={loading}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Request id</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Model</th>
                  <th scope="col">Units</th>
                  <th scope="col" class="number">
                    Answer time
                  </th>
                  <th scope="col" class="number">
                    Amount
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.data.map((row) => (
                  <tr key={row.id}>
                    <td>{formatTime(row.created_at)}</td>
                    <td>
                      <code>{row.request_id ?? '—'}</code>
                    </td>
                    <td>{row.endpoint}</td>
                    <td>{row.model}</td>
                    <td>{formatUnits(row.units)}</td>
                    {/* The channel's own time to answer (null for tasks, which are polled). */}
                    <td class="number">{row.upstream_ms === null ? '—' : `${row.upstream_ms} ms`}</td>
                    <td class="number">{formatMicros(row.amount_micros)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {data.data.length === 0 && <p>No usage matches this filter.</p>}
          <Pager pages={pages} label="Usage pages" />
        </>
      )}
    </>
  );
}
