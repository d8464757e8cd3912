// The account's top-ups (credits, and debits such as a refunded card payment) in pages, newest
// first, each with what it was; and every one of them as a CSV download.
import type { TopUp } from '../api';
import { formatTime } from '../format';
import { formatMicros } from '../money';
import { usePages } from '../use-pages';
import { Failure } from './Notice';
import { Pager } from './Pager';

export function TopUpTable() {
  const pages = usePages<TopUp>('/v1/account/topups', {});
  const { page: data, error, loading } = pages;
  return (
    <section>
      <h2>Your top-ups</h2>
      <p>
        <a href="/v1/account/topups.csv" download="topups.csv">
          Download CSV (every top-up)
        </a>
      </p>
      <Failure message={error} />
      {data && (
        <>
          <div class="table" aria-busy={loading}>
            <table aria-label="Top-ups">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">What</th>
                  <th scope="col">Ledger row</th>
                  <th scope="col" class="number">
                    Amount
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.data.map((row) => (
                  <tr key={row.id}>
                    <td>{formatTime(row.created_at)}</td>
                    <td class="wrap">{row.description}</td>
                    <td>
                      <code>
                        {row.kind} #{row.id}
                      </code>
                    </td>
                    <td class="number">{formatMicros(row.amount_micros)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {data.data.length === 0 && <p>No top-ups yet.</p>}
          <Pager pages={pages} label="Top-up pages" />
        </>
      )}
    </section>
  );
}
