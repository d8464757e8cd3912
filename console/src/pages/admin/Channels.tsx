// The channels the gateway calls, and what this instance knows of them now: each one's circuit
// breaker (closed, open, half-open, or disabled by the operator), its recent attempts, error rate,
// latency and last error, its keys by fingerprint, and its connection pool; beside them the rate
// limiter's breaker on Redis and whether the store takes writes. The operator disables a channel
// (after confirming) or enables it again: in force at once, on this instance only.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf } from '../../api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Failure } from '../../components/Notice';
import { useLoad } from '../../use-load';
import type { Admin, Channel, Channels as ChannelsAnswer } from './admin-api';
import { ChannelRow } from './ChannelRow';

function Card({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="card">
      <h2>{title}</h2>
      <p>{children}</p>
    </div>
  );
}

// Name, state and the switch first, so a phone's width shows them before the table scrolls.
const COLUMNS = ['Channel', 'State', 'Action', 'Attempts', 'Error rate', 'Latency p50 / p99', 'On the wire', 'Last error', 'Keys', 'Models'];
const NUMBERS = new Set(['Attempts', 'Error rate', 'Latency p50 / p99', 'On the wire']);

const channelPath = (name: string, action: 'disable' | 'enable') => `/admin/channels/${encodeURIComponent(name)}/${action}`;

export function Channels({ admin }: { admin: Admin }) {
  const { data, error, loading, reload } = useLoad(() => admin.get<ChannelsAnswer>('/admin/channels'));
  const [disabling, setDisabling] = useState<Channel>();
  const [switching, setSwitching] = useState(false);
  const [failure, setFailure] = useState<string>();
  const [done, setDone] = useState('');
  const limiter = data?.rate_limiter;

  const steer = async (channel: Channel, action: 'disable' | 'enable') => {
    setDisabling(undefined);
    setFailure(undefined);
    setDone('');
    setSwitching(true);
    try {
      await admin.post<Channel>(channelPath(channel.name, action));
      setDone(`Channel ${channel.name} ${action}d.`);
    } catch (caught) {
      setFailure(messageOf(caught));
    }
    setSwitching(false);
    reload();
  };
  // Taking a channel out of traffic asks first; putting it back does not. A click while one switch
  // is on its way is ignored (the button stays enabled, so keyboard focus stays on it).
  const onSwitch = (channel: Channel) => {
    if (switching) return;
    if (channel.state === 'disabled') void steer(channel, 'enable');
    else setDisabling(channel);
  };

  return (
    <>
      <h1>Channels</h1>
      <p>
        This instance’s view, read when the page loaded.{' '}
        <button type="button" onClick={reload} disabled={loading}>
          Refresh
        </button>
      </p>
      <Failure message={failure ?? error} />
      <p class="status" role="status">
        {done}
      </p>
      {data && (
        <>
          <div class="cards">
            <Card title="Rate limits">
              {!limiter?.shared ? 'Per instance (no Redis)' : limiter.degraded ? 'Degraded: Redis failing, per instance' : 'Shared through Redis'}
            </Card>
            <Card title="Store">{data.store.writable ? 'Takes writes' : 'Refuses writes: calls get 503'}</Card>
          </div>
          <p class="hint">Attempts, error rate and latency cover the last 100 attempts within the last minute.</p>
          <div class="table" aria-busy={loading}>
            <table>
              <caption>Configured channels</caption>
              <thead>
                <tr>
                  {COLUMNS.map((column) => (
                    <th key={column} scope="col" class={NUMBERS.has(column) ? 'number' : undefined}>
                      {column}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.data.map((channel) => (
                  <ChannelRow key={channel.name} channel={channel} onSwitch={onSwitch} />
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <ConfirmDialog
        open={disabling !== undefined}
        title="Disable this channel?"
        confirmLabel="Disable channel"
        onConfirm={() => disabling && void steer(disabling, 'disable')}
        onCancel={() => setDisabling(undefined)}
      >
        <p>
          No new call goes to <code>{disabling?.name}</code> on this instance until it is enabled again: its models fail over to their other channels, or answer
          502 with Retry-After where it is their only one. Calls on the wire finish. Other instances, and this one after a restart, keep using it.
        </p>
      </ConfirmDialog>
    </>
  );
}
