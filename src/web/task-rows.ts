import { basename } from 'node:path';
import { decodeList } from '../db/json-columns.js';
import type { Stores } from '../db/index.js';
import { runsSampleFile, type TaskRow } from '../db/schema.js';

/** A task as the web interface's lists show it. */
export interface TaskListRow {
  id: number;
  category: string;
  /** The URL, or the name the file was submitted under (never a server path). */
  target: string;
  state: string;
  /** Null until the task is reported. */
  score: number | null;
  package: string;
  /** The machine it ran on, else the one asked for ('' for any). */
  machine: string;
  owner: string;
  tags: string[];
  added_on: string;
  completed_on: string | null;
}

export async function taskListRows(stores: Stores, tasks: readonly TaskRow[]): Promise<TaskListRow[]> {
  const guests = await stores.tasks.guestsOf(tasks.map((task) => task.id));
  return tasks.map((task) => ({
    id: task.id,
    category: task.category,
    target: runsSampleFile(task.category) ? basename(task.target) : task.target,
    state: task.status,
    score: task.score,
    package: task.package,
    machine: guests.get(task.id)?.name ?? task.machine,
    owner: task.owner,
    tags: decodeList(task.tags),
    added_on: task.added_on,
    completed_on: task.completed_on,
  }));
}
