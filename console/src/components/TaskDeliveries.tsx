// One task's webhook deliveries, shown under its row on the Tasks page: attempts, last answer,
// times, and a Redeliver button on a dropped one. While one is pending (a redelivery going out),
// the list is read again every second, so its outcome shows without a reload.
import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, type Page, query, type WebhookDelivery } from '../api';
import { formatTime } from '../format';
import { useLoad } from '../use-load';
import { Failure } from './Notice';

const PENDING_REREAD_MS = 1_000;

function lastAnswer(delivery: WebhookDelivery): string {
  if (delivery.last_status !== null) return `HTTP ${delivery.last_status}`;
  return delivery.last_error ?? '—';
}

function when(delivery: WebhookDelivery): string {
  if (delivery.state === 'delivered') return `delivered ${formatTime(delivery.delivered_at)}`;
  if (delivery.state === 'pending') return `next attempt ${formatTime(delivery.next_attempt_at)}`;
  return 'dropped: no attempts left';
}

export function TaskDeliveries({ taskId }: { taskId: string }) {
  const { data, error, reload } = useLoad(() => api<Page<WebhookDelivery>>('GET', `/v1/account/webhook-deliveries${query({ task_id: taskId })}`), [taskId]);
  const [failure, setFailure] = useState<string>();
  const [done, setDone] = useState('');
  const pending = data?.data.some((delivery) => delivery.state === 'pending') ?? false;

  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(reload, PENDING_REREAD_MS);
    return () => clearTimeout(timer);
  }, [data, pending]);

  const redeliver = async (delivery: WebhookDelivery) => {
    setFailure(undefined);
    setDone('');
    try {
      await api<WebhookDelivery>('POST', `/v1/account/webhook-deliveries/${encodeURIComponent(delivery.id)}/redeliver`);
      setDone(`Delivery ${delivery.id} is going out again.`);
      reload();
    } catch (caught) {
      setFailure(messageOf(caught));
    }
  };

  return (
    <div class="deliveries">
      <Failure message={failure ?? error} />
      {data && data.data.length === 0 && <p>No webhook deliveries for this task (it had no callback_url, or has not finished).</p>}
      {data && data.data.length > 0 && (
        <div class="table">
          <table>
            <caption>Webhook deliveries of {taskId}</caption>
            <thead>
              <tr>
                <th scope="col">Event id</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">When</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    <code>{delivery.event_id}</code>
                  </td>
                  <td>{delivery.state}</td>
                  <td>{delivery.attempts}</td>
                  <td class="wrap">{lastAnswer(delivery)}</td>
                  <td>{when(delivery)}</td>
                  <td>
                    {delivery.state === 'dropped' && (
                      <button type="button" aria-label={`Redeliver ${delivery.event_id}`} onClick={() => redeliver(delivery)}>
                        Redeliver
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="status" role="status">
        {done}
      </p>
    </div>
  );
}
