// An account's keys as a table: prefix, name, one column of the page's own (the account's limits,
// the operator's rpm), times, and what may be done to a live key. Shared by the Keys page and the
// operator view; a revoked key shows when it was revoked instead of its actions.
import type { ComponentChildren } from 'preact';
import type { ApiKey } from '../api';
import { formatTime } from '../format';

export interface KeyTableProps {
  keys: ApiKey[];
  caption?: string;
  /** The page's own column: its heading, its cell, and whether the cell may wrap. */
  detail: { heading: string; cell(key: ApiKey): ComponentChildren; wrap?: boolean };
  /** The controls of a key that still works. */
  actions(key: ApiKey): ComponentChildren;
}

/** How a key is named to a screen reader in its row's controls. */
export const keyLabel = (key: ApiKey) => `${key.prefix} (${key.name ?? 'no name'})`;

export function KeyTable({ keys, caption, detail, actions }: KeyTableProps) {
  return (
    <div class="table">
      <table>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            <th scope="col">Prefix</th>
            <th scope="col">Name</th>
            <th scope="col">{detail.heading}</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} data-key-id={key.id}>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td>{key.name ?? '—'}</td>
              <td class={detail.wrap ? 'wrap' : undefined}>{detail.cell(key)}</td>
              <td>{formatTime(key.created_at)}</td>
              <td>{formatTime(key.last_used_at)}</td>
              <td>{key.revoked_at !== null ? `revoked ${formatTime(key.revoked_at)}` : actions(key)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
