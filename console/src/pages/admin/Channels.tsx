// The channels the gateway calls, and what this instance knows of them now: each one's connection
// pool (calls on the wire, calls waiting), the rate limiter's breaker on Redis and whether the store
// takes writes. The gateway keeps no per-channel health: an upstream that fails fails its calls.
import type { ComponentChildren } from 'preact';
import { Failure } from '../../components/Notice';
import { useLoad } from '../../use-load';
import type { Admin, Channels as ChannelsAnswer } from './admin-api';

function Card({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="card">
      <h2>{title}</h2>
      <p>{children}</p>
    </div>
  );
}

export function Channels({ admin }: { admin: Admin }) {
  const { data, error, loading, reload } = useLoad(() => admin.get<ChannelsAnswer>('/admin/channels'));
  const limiter = data?.rate_limiter;

  return (
    <>
      <h1>Channels</h1>
      <p>
        This instance’s view, read when the page loaded.{' '}
        <button type="button" onClick={reload} disabled={loading}>
          Refresh
        </button>
      </p>
      <Failure message={error} />
      {data && (
        <>
          <div class="cards">
            <Card title="Rate limits">
              {!limiter?.shared ? 'Per instance (no Redis)' : limiter.degraded ? 'Degraded: Redis failing, per instance' : 'Shared through Redis'}
            </Card>
            <Card title="Store">{data.store.writable ? 'Takes writes' : 'Refuses writes: calls get 503'}</Card>
          </div>
          <div class="table" aria-busy={loading}>
            <table>
              <caption>Configured channels</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Origin</th>
                  <th scope="col" class="number">
                    On the wire
                  </th>
                  <th scope="col" class="number">
                    Waiting
                  </th>
                  <th scope="col">Models</th>
                </tr>
              </thead>
              <tbody>
                {data.data.map((channel) => (
                  <tr key={channel.name}>
                    <td>{channel.name}</td>
                    <td>{channel.kind}</td>
                    <td>
                      <code>{channel.origin}</code>
                    </td>
                    <td class="number">
                      {channel.connections.in_flight} / {channel.connections.limit}
                    </td>
                    <td class="number">{channel.connections.waiting}</td>
                    <td class="wrap">{channel.models.join(', ') || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}
