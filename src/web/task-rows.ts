import { basename } from 'node:path';
import { decodeList } from '../db/json-columns.js';
import type { Stores } from '../db/index.js';
import { runsSampleFile, type TaskRow } from '../db/schema.js';
import type { TaskListRow } from './task-list-row.js';

/** The rows of the given tasks, with the machine each ran on. */
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
