// One channel's row on the Channels page: its name (a row header) with its kind and origin, its
// breaker's state as a badge, its recent figures
// (attempts, error rate, latency), its last error, its keys by fingerprint with their own state,
// and the operator's switch (Disable asks first, in the page's dialog; Enable acts at once).
import { formatTime } from '../../format';
import type { Channel, ChannelKey, ChannelState } from './admin-api';

const STATE_HINTS: Record<ChannelState, string> = {
  closed: 'Takes calls',
  open: 'Takes no calls until its cool-down ends',
  half_open: 'One probe call decides whether it closes',
  disabled: 'Out of traffic by the operator',
};

/** The state in words (a badge), never by colour alone; its hint says what it means for calls. */
export function StateBadge({ state }: { state: ChannelState }) {
  return (
    <span class={`badge state-${state}`} title={STATE_HINTS[state]}>
      {state.replace('_', '-')}
    </span>
  );
}

/** `2024-05-01T12:34:56.789Z` → `12:34:56 UTC`: cool-downs and rests are seconds to minutes long. */
const clock = (iso: string) => `${iso.slice(11, 19)} UTC`;

/** 0.0125 → `1.3%`; no attempts in the window → `—` (no rate to speak of). */
export const percent = (rate: number, requests: number) => (requests === 0 ? '—' : `${(rate * 100).toFixed(1)}%`);

function latency({ p50, p99 }: Channel['latency_ms']): string {
  if (p50 === null || p99 === null) return '—';
  return `${p50} / ${p99} ms`;
}

function KeyItem({ channelKey }: { channelKey: ChannelKey }) {
  const { key, state, requests, error_rate, rested_until } = channelKey;
  return (
    <li>
      <code>{key}</code> <StateBadge state={state} />{' '}
      {requests === 0 ? 'no attempts' : `${requests} ${requests === 1 ? 'attempt' : 'attempts'}, ${percent(error_rate, requests)} failed`}
      {rested_until !== null && `, resting until ${clock(rested_until)}`}
    </li>
  );
}

export function ChannelRow({ channel, onSwitch }: { channel: Channel; onSwitch: (channel: Channel) => void }) {
  const disabled = channel.state === 'disabled';
  return (
    <tr data-channel={channel.name}>
      <th scope="row" class="channel-name">
        {channel.name}
        <div class="hint">
          {channel.kind} · <code>{channel.origin}</code>
        </div>
      </th>
      <td>
        <StateBadge state={channel.state} />
        {channel.opens_until !== null && <div class="hint">until {clock(channel.opens_until)}</div>}
      </td>
      <td>
        <button
          type="button"
          class={disabled ? undefined : 'danger'}
          aria-label={`${disabled ? 'Enable' : 'Disable'} channel ${channel.name}`}
          onClick={() => onSwitch(channel)}
        >
          {disabled ? 'Enable' : 'Disable'}
        </button>
      </td>
      <td class="number">{channel.requests}</td>
      <td class="number">{percent(channel.error_rate, channel.requests)}</td>
      <td class="number">{latency(channel.latency_ms)}</td>
      <td class="number">
        {channel.connections.in_flight} / {channel.connections.limit}
        <div class="hint">{channel.connections.waiting} waiting</div>
      </td>
      <td class="detail">
        {channel.last_error ? (
          <>
            {channel.last_error.message}
            <div class="hint">{formatTime(channel.last_error.at)}</div>
          </>
        ) : (
          '—'
        )}
      </td>
      <td class="detail">
        {channel.keys.length === 0 ? (
          '—'
        ) : (
          <ul class="channel-keys" aria-label={`Keys of ${channel.name}`}>
            {channel.keys.map((key) => (
              <KeyItem key={key.key} channelKey={key} />
            ))}
          </ul>
        )}
      </td>
      <td class="detail">{channel.models.join(', ') || '—'}</td>
    </tr>
  );
}
