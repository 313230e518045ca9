import { randomBytes } from 'node:crypto';
import { access, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Stores } from '../db/index.js';
import { encodeList } from '../db/json-columns.js';
import { runsSampleFile, TASK_STATUSES, type NewTask, type TaskRow, type TaskStatus } from '../db/schema.js';
import { conflict, internal, invalidInput, isNestboxError, notFound, unavailable } from '../errors.js';
import type { StorageLayout } from '../storage/layout.js';
import { nowIso } from '../util/time.js';
import { formatOptions, parseOptions } from '../db/task-options.js';

/**
 * What a client can do to an existing task, without HTTP: reschedule, delete, rereport, reboot. Each
 * operation either happens completely or leaves the task as it was.
 */
export interface LifecycleContext {
  config: Config;
  stores: Stores;
  layout: StorageLayout;
}

/** A task whose analysis has not ended yet has nothing to run again or to start from. */
const UNFINISHED: readonly TaskStatus[] = ['pending', 'running'];
const FINISHED: readonly TaskStatus[] = TASK_STATUSES.filter((status) => !UNFINISHED.includes(status));

/**
 * Queues a copy of a finished task and marks the original `recovered`, both or neither. Unlike Cuckoo,
 * a pending or running task is refused (409) instead of being marked recovered while it still runs.
 */
export async function rescheduleTask(ctx: LifecycleContext, taskId: number, priority = 1): Promise<number> {
  const maxPriority = ctx.config.tasks.max_priority;
  if (!Number.isSafeInteger(priority) || priority < 1 || priority > maxPriority) {
    throw invalidInput(`Priority must be between 1 and ${maxPriority}`, { context: { taskId, priority } });
  }
  const task = await ctx.stores.tasks.get(taskId);
  if (!task) throw notFound('There is no analysis with the specified ID', { context: { taskId } });
  refuseUnfinished(task, 'rescheduled');
  if (!(await targetAvailable(task))) {
    throw internal('An error occurred while trying to reschedule the task', {
      context: { taskId, reason: 'the sample file is gone', target: task.target },
    });
  }
  return ctx.stores.transaction(async (trx) => {
    if (!(await ctx.stores.tasks.transition(taskId, FINISHED, 'recovered', {}, trx))) {
      throw conflict(`Task ${taskId} changed state meanwhile; try again`, { context: { taskId } });
    }
    return ctx.stores.tasks.insert(rescheduledCopy(task, priority), trx);
  });
}

/**
 * The fields Cuckoo copies when rescheduling; options are stored normalised, as Cuckoo does. An archive
 * task keeps its provenance (Cuckoo refuses to reschedule archive tasks; nestbox runs the unpacked file again).
 */
function rescheduledCopy(task: TaskRow, priority: number): NewTask {
  return {
    target: task.target,
    category: task.category,
    timeout: task.timeout,
    priority,
    custom: task.custom,
    owner: task.owner,
    machine: task.machine,
    package: task.package,
    platform: task.platform,
    tags: task.tags,
    options: formatOptions(parseOptions(task.options)),
    memory: task.memory,
    enforce_timeout: task.enforce_timeout,
    clock: task.clock,
    added_on: nowIso(),
    status: 'pending',
    sample_id: task.sample_id,
    reboot_of: task.reboot_of,
    archive_id: task.archive_id,
    archive_name: task.archive_name,
    archive_member: task.archive_member,
  };
}

/**
 * Removes the task's row (its guests and errors cascade) and its analysis folder; the sample row and
 * binary stay. The folder is first renamed aside in one atomic step, so `analyses/<id>` is never seen
 * half-deleted and never outlives its row: if the row cannot be removed the folder is put back.
 */
export async function deleteTask(ctx: LifecycleContext, taskId: number): Promise<void> {
  const task = await ctx.stores.tasks.get(taskId);
  if (!task) throw notFound('Task not found', { context: { taskId } });
  if (task.status === 'running') throw beingProcessed(taskId);
  const folder = ctx.layout.analysis(taskId).dir;
  const aside = join(ctx.layout.analyses, `.deleted-${taskId}-${randomBytes(4).toString('hex')}`);
  const moved = await moveAside(folder, aside, taskId);
  try {
    if (!(await ctx.stores.tasks.deleteUnlessRunning(taskId))) {
      throw (await ctx.stores.tasks.get(taskId)) ? beingProcessed(taskId) : notFound('Task not found', { context: { taskId } });
    }
  } catch (error) {
    if (moved) await rename(aside, folder);
    if (isNestboxError(error)) throw error;
    throw internal('An error occurred while trying to delete the task', { cause: error, context: { taskId } });
  }
  if (moved) await removeAside(aside, taskId);
}

/** True when the folder was moved, false when there was none. */
async function moveAside(folder: string, aside: string, taskId: number): Promise<boolean> {
  try {
    await rename(folder, aside);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw internal('An error occurred while trying to delete the task', { cause: error, context: { taskId, folder } });
  }
}

async function removeAside(aside: string, taskId: number): Promise<void> {
  try {
    await rm(aside, { recursive: true, force: true });
  } catch (error) {
    throw internal('The task was deleted but its analysis folder could not be removed completely', {
      cause: error,
      context: { taskId, leftover: aside },
    });
  }
}

const beingProcessed = (taskId: number) =>
  unavailable('The task is currently being processed, cannot delete', { context: { taskId } });

/**
 * A reported task goes back to `completed` (with no processing worker), so the processing stage makes
 * its report again (its score is unknown until then). False, and no change, for any other status.
 */
export async function rereportTask(ctx: LifecycleContext, taskId: number): Promise<boolean> {
  const task = await ctx.stores.tasks.get(taskId);
  if (!task) throw notFound('Task not found', { context: { taskId } });
  return ctx.stores.tasks.transition(taskId, ['reported'], 'completed', { completed_on: nowIso(), processing: null, score: null });
}

/**
 * Queues a task that runs the same sample again, starting from the end state of the original analysis
 * (`reboot_of`). As in Cuckoo: category file, custom = the original id, default timeout and priority,
 * no options or tags; unlike Cuckoo it keeps the package, platform and owner, runs on the machine the
 * original ran on, and refuses (409) an original whose analysis has not ended, since there is no end
 * state to start from yet.
 */
export async function rebootTask(ctx: LifecycleContext, taskId: number): Promise<number> {
  const task = await ctx.stores.tasks.get(taskId);
  if (!task || !runsSampleFile(task.category) || !(await targetAvailable(task))) {
    throw notFound('Error creating reboot task', {
      context: { taskId, category: task?.category, target: task?.target },
    });
  }
  refuseUnfinished(task, 'rebooted');
  // The end state lives where the original ran (a linux tar or a qemu disk): the reboot runs there too.
  const ranOn = (await ctx.stores.tasks.guestsOf([task.id])).get(task.id)?.name ?? '';
  return ctx.stores.tasks.insert({
    target: task.target,
    category: 'file',
    timeout: 0,
    priority: 1,
    custom: String(task.id),
    owner: task.owner,
    machine: ranOn,
    package: task.package,
    platform: task.platform,
    tags: encodeList([]),
    options: '',
    memory: 0,
    enforce_timeout: 0,
    clock: nowIso(),
    added_on: nowIso(),
    status: 'pending',
    sample_id: task.sample_id,
    reboot_of: task.id,
  });
}

function refuseUnfinished(task: TaskRow, what: string): void {
  if (UNFINISHED.includes(task.status)) {
    throw conflict(`Task ${task.id} is still ${task.status}; only a task whose analysis has ended can be ${what}`, {
      context: { taskId: task.id, status: task.status },
    });
  }
}

/** URL tasks always are; file tasks need their stored sample file, which the analysis reads. */
async function targetAvailable(task: TaskRow): Promise<boolean> {
  if (!runsSampleFile(task.category)) return true;
  try {
    await access(task.target);
    return true;
  } catch {
    return false;
  }
}
