import type { Stores } from '../db/index.js';
import type { ErrorRow, GuestRow, SampleRow, TaskRow } from '../db/schema.js';
import type { TaskListFilter } from '../db/tasks.js';

/** What a task's API object shows besides its own columns. */
export interface TaskDetails {
  sample?: SampleRow;
  guest?: GuestRow;
  errors?: readonly ErrorRow[];
}

/** A task row with what its API object shows besides its own columns: sample, guest and errors. */
export interface DetailedTask {
  task: TaskRow;
  details: TaskDetails;
}

/** Keeps every `IN (...)` list well under the bound-parameter limits of SQLite and PostgreSQL. */
const BATCH = 500;

/** Tasks matching `filter`, in `TaskStore.list` order, each with its details. */
export async function listDetailedTasks(stores: Stores, filter: TaskListFilter): Promise<DetailedTask[]> {
  return withDetails(stores, await stores.tasks.list(filter));
}

export async function getDetailedTask(stores: Stores, id: number): Promise<DetailedTask | undefined> {
  const task = await stores.tasks.get(id);
  if (!task) return undefined;
  const [detailed] = await withDetails(stores, [task]);
  return detailed;
}

/** Loads the details of many tasks with three queries per batch, whatever the number of tasks. */
export async function withDetails(stores: Stores, tasks: readonly TaskRow[]): Promise<DetailedTask[]> {
  const result: DetailedTask[] = [];
  for (let start = 0; start < tasks.length; start += BATCH) {
    const batch = tasks.slice(start, start + BATCH);
    const ids = batch.map((task) => task.id);
    const sampleIds = batch.flatMap((task) => (task.sample_id === null ? [] : [task.sample_id]));
    const [samples, guests, errors] = await Promise.all([
      stores.samples.getMany(sampleIds),
      stores.tasks.guestsOf(ids),
      stores.tasks.errorsOf(ids),
    ]);
    for (const task of batch) {
      result.push({
        task,
        details: {
          sample: task.sample_id === null ? undefined : samples.get(task.sample_id),
          guest: guests.get(task.id),
          errors: errors.get(task.id) ?? [],
        },
      });
    }
  }
  return result;
}
