// The account's tasks (images, videos, subtitle erasure, minutes), newest first, filtered by kind
// and status, in pages; each row opens its webhook deliveries.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { Task } from '../api';
import { Choice } from '../components/Choice';
import { Failure } from '../components/Notice';
import { Pager } from '../components/Pager';
import { TaskDeliveries } from '../components/TaskDeliveries';
import { formatTime } from '../format';
import { usePages } from '../use-pages';

const KINDS = ['image', 'video', 'erase', 'minutes'] as const;
const STATUSES = ['queued', 'processing', 'succeeded', 'failed', 'cancelled'] as const;

export function Tasks() {
  const [kind, setKind] = useState('');
  const [status, setStatus] = useState('');
  const pages = usePages<Task>('/v1/account/tasks', { kind, status });
  const { page, error, loading } = pages;
  const [open, setOpen] = useState<string>();
  return (
    <>
      <h1>Tasks</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <Choice id="task-kind" label="Kind" options={KINDS} value={kind} onChange={setKind} />
        <Choice id="task-status" label="Status" options={STATUSES} value={status} onChange={setStatus} />
      </form>
      <Failure message={error} />
      {page && (
        <>
          <div class="table" aria-busy={loading}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Task id</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Model</th>
                  <th scope="col">Status</th>
                  <th scope="col">Finished</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((task) => (
                  <Fragment key={task.id}>
                    <tr>
                      <td>{formatTime(task.created_at)}</td>
                      <td>
                        <code>{task.id}</code>
                      </td>
                      <td>{task.kind}</td>
                      <td>{task.model}</td>
                      <td class="wrap">
                        {task.error ? `${task.status}: ${task.error.message}` : task.status}{' '}
                        {/* in the status cell, which wraps: a column of its own would widen the table further */}
                        <button
                          type="button"
                          class="small"
                          aria-expanded={open === task.id}
                          aria-controls={open === task.id ? `deliveries-${task.id}` : undefined}
                          aria-label={`Webhooks of ${task.id}`}
                          onClick={() => setOpen(open === task.id ? undefined : task.id)}
                        >
                          Webhooks
                        </button>
                      </td>
                      <td>{task.finished_at === null ? '—' : formatTime(task.finished_at)}</td>
                    </tr>
                    {open === task.id && (
                      <tr id={`deliveries-${task.id}`}>
                        <td colSpan={6}>
                          <TaskDeliveries taskId={task.id} />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </div>
          {page.data.length === 0 && <p>No tasks match this filter.</p>}
          <Pager pages={pages} label="Task pages" />
        </>
      )}
    </>
  );
}
