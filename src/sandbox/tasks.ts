import type { FaultRule } from './faults.js';
import { hashOf } from './text.js';

// The sandbox's async upstream tasks (video, minutes, subtitle erase) share one clock: a task is queued for
// the first third of `taskMs`, running until `taskMs`, then ends as it was told to when it was created.

export type TaskOutcome = 'succeeded' | 'failed';
export type TaskPhase = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface SandboxTask<T> {
  readonly id: string;
  readonly createdAtMs: number;
  /** Decided at creation (a `task_outcome` fault), so polling never changes how a task ends. */
  readonly outcome: TaskOutcome;
  cancelledAtMs: number | undefined;
  readonly data: T;
}

/** Names one kind's tasks and the type of what each keeps; each kind module declares its own. */
export interface TaskShelf<T> {
  readonly name: string;
  /** Never set: carries `T` so `get` needs no cast at the call site. */
  readonly type?: T;
}

export function taskShelf<T>(name: string): TaskShelf<T> {
  return { name };
}

/** Past this many tasks of a kind the oldest is forgotten: a long-running sandbox keeps them in memory. */
export const DEFAULT_TASK_LIMIT = 10_000;

export class TaskBook {
  private readonly shelves = new Map<string, Map<string, SandboxTask<unknown>>>();
  private created = 0;

  constructor(
    readonly taskMs: number,
    private readonly now: () => number = Date.now,
    private readonly limit = DEFAULT_TASK_LIMIT,
  ) {}

  /** A hash of the request and a counter: the same requests in the same order get the same ids. */
  nextId(request: unknown): string {
    this.created += 1;
    return `${hashOf(request).slice(0, 16)}${this.created.toString().padStart(4, '0')}`;
  }

  create<T>(shelf: TaskShelf<T>, task: { id: string; outcome: TaskOutcome; data: T }): SandboxTask<T> {
    const tasks = this.tasksOf(shelf);
    const stored: SandboxTask<T> = { ...task, createdAtMs: this.now(), cancelledAtMs: undefined };
    tasks.set(task.id, stored);
    if (tasks.size > this.limit) tasks.delete(tasks.keys().next().value as string);
    return stored;
  }

  get<T>(shelf: TaskShelf<T>, id: string): SandboxTask<T> | undefined {
    return this.tasksOf(shelf).get(id) as SandboxTask<T> | undefined;
  }

  delete<T>(shelf: TaskShelf<T>, id: string): boolean {
    return this.tasksOf(shelf).delete(id);
  }

  cancel(task: SandboxTask<unknown>): void {
    task.cancelledAtMs ??= this.now();
  }

  phase(task: SandboxTask<unknown>): TaskPhase {
    if (task.cancelledAtMs !== undefined) return 'cancelled';
    const elapsed = this.now() - task.createdAtMs;
    if (elapsed < this.taskMs / 3) return 'queued';
    if (elapsed < this.taskMs) return 'running';
    return task.outcome;
  }

  /** When the task last changed phase (its creation, the start of running, its end, or its cancel). */
  updatedAtMs(task: SandboxTask<unknown>): number {
    if (task.cancelledAtMs !== undefined) return task.cancelledAtMs;
    const phase = this.phase(task);
    if (phase === 'queued') return task.createdAtMs;
    if (phase === 'running') return task.createdAtMs + Math.floor(this.taskMs / 3);
    return task.createdAtMs + this.taskMs;
  }

  private tasksOf(shelf: TaskShelf<unknown>): Map<string, SandboxTask<unknown>> {
    let tasks = this.shelves.get(shelf.name);
    if (!tasks) {
      tasks = new Map();
      this.shelves.set(shelf.name, tasks);
    }
    return tasks;
  }
}

/** How a task created under this fault rule ends. */
export function outcomeOf(fault: FaultRule | undefined): TaskOutcome {
  return fault?.task_outcome === 'failed' ? 'failed' : 'succeeded';
}

/**
 * The `duration_s=<N>` query parameter of a media URL (how tests set the length of the audio or video the
 * sandbox pretends to fetch), `fallback` when absent, or an error message when it is not a positive number.
 */
export function durationFromUrl(url: string, fallback: number): number | string {
  const queryAt = url.indexOf('?');
  const value = queryAt === -1 ? null : new URLSearchParams(url.slice(queryAt + 1)).get('duration_s');
  if (value === null) return fallback;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) return `duration_s=${value}: expected a positive number`;
  return seconds;
}
