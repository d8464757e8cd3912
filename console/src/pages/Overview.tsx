// The account at a glance: balance and funds held, spend over the last day, week and month,
// spend by model, and a chart of spend per day.
import { type Account, api, query, type Spend } from '../api';

import { Failure } from '../components/Notice';
import { SpendChart } from '../components/SpendChart';
import { formatMicros, sumMicros } from '../money';
import { useLoad } from '../use-load';

const DAY_MS = 86_400_000;
const PERIODS = [
  { label: 'Last 24 hours', days: 1 },
  { label: 'Last 7 days', days: 7 },
  { label: 'Last 30 days', days: 30 },
] as const;

const spend = (groupBy: 'day' | 'model', from: string) =>
  api<{ data: Spend[] }>('GET', `/v1/account/spend${query({ group_by: groupBy, from })}`).then((answer) => answer.data);
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString();

/** The last `count` UTC days, oldest first, as `YYYY-MM-DD`. */
function lastDays(count: number, now = Date.now()): string[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return Array.from({ length: count }, (_, index) => new Date(today - (count - 1 - index) * DAY_MS).toISOString().slice(0, 10));
}

/** One bar per day of the last 30, days without spend at zero, so the chart's width is always a month. */
function dailySpend(byDay: Spend[]) {
  const spent = new Map(byDay.map((row) => [row.day, row.amount_micros]));
  return lastDays(30).map((day) => ({ day, micros: spent.get(day) ?? 0 }));
}

async function loadOverview() {
  const [account, byDay, ...byModel] = await Promise.all([
    api<Account>('GET', '/v1/account'),
    // Whole UTC days, from the start of the chart's first.
    spend('day', `${lastDays(30)[0]}T00:00:00Z`),
    ...PERIODS.map((period) => spend('model', daysAgo(period.days))),
  ]);
  // Made once per load, so the chart is drawn once per answer, not on every render.
  return { account, days: dailySpend(byDay), byModel };
}

export function Overview() {
  const { data, error } = useLoad(loadOverview);
  if (!data) return <Failure message={error} />;
  const { account, days, byModel } = data;
  const month = byModel.at(-1) ?? [];
  return (
    <>
      <h1>Overview</h1>
      <Failure message={error} />
      <section class="cards" aria-label="Balance">
        <div class="card">
          <h2>Balance</h2>
          <p class="figure" data-testid="balance">
            {formatMicros(account.balance_micros)}
          </p>
        </div>
        <div class="card">
          <h2>Held by running calls</h2>
          <p class="figure" data-testid="held">
            {formatMicros(account.held_micros)}
          </p>
        </div>
      </section>
      <section class="cards" aria-label="Spend">
        {PERIODS.map((period, index) => (
          <div class="card" key={period.label}>
            <h2>{period.label}</h2>
            <p class="figure">{formatMicros(sumMicros((byModel[index] ?? []).map((row) => row.amount_micros)))}</p>
            <p>{(byModel[index] ?? []).reduce((total, row) => total + row.requests, 0)} requests</p>
          </div>
        ))}
      </section>
      <section>
        <h2>Spend per day, last 30 days (UTC)</h2>
        <SpendChart title="Spend per day over the last 30 days" days={days} />
      </section>
      <section>
        <h2>By model, last 30 days</h2>
        {month.length === 0 ? (
          <p>No billed calls in the last 30 days.</p>
        ) : (
          <div class="table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col" class="number">
                    Requests
                  </th>
                  <th scope="col" class="number">
                    Spend
                  </th>
                </tr>
              </thead>
              <tbody>
                {month.map((row) => (
                  <tr key={row.model}>
                    <td>{row.model}</td>
                    <td class="number">{row.requests}</td>
                    <td class="number">{formatMicros(row.amount_micros)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
