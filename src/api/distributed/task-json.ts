import { basename } from 'node:path';
import type { DistributedTaskFilter } from '../../db/distributed-tasks.js';
import { decodeList } from '../../db/json-columns.js';
import { runsSampleFile, TASK_STATUSES, type TaskRow, type TaskStatus } from '../../db/schema.js';

/**
 * A nestbox task as Cuckoo's distributed API shows it (cuckoo-compat §7.2): a distributed task is a
 * nestbox task, with the same id.
 */

export const DIST_STATUSES = ['pending', 'assigned', 'processing', 'finished', 'deleted'] as const;
export type DistStatus = (typeof DIST_STATUSES)[number];

/** Statuses of an analysis that is over, whatever its outcome: its results are final. */
export const ENDED: readonly TaskStatus[] = TASK_STATUSES.filter((status) => !['pending', 'running', 'completed'].includes(status));

/**
 * Cuckoo's lifecycle: pending (no node yet) -> assigned (pinned to a node, not started) -> processing (a
 * node runs or processes it) -> finished. A failed analysis is finished too: it has no report.
 */
export function distStatusOf(task: TaskRow): DistStatus {
  if (task.status === 'pending') return task.node === null ? 'pending' : 'assigned';
  // Taken for a remote node but not yet created there (the main node is handing it over, or will again
  // when the node answers): still assigned, as in Cuckoo until the node has the task.
  if (task.status === 'running' && task.delegated_on !== null && task.node_task_id === null) return 'assigned';
  if (task.status === 'running' || task.status === 'completed') return 'processing';
  return 'finished';
}

/** The tasks each distributed status stands for; deleted tasks have no row. */
export const DIST_STATUS_FILTERS: Record<DistStatus, Pick<DistributedTaskFilter, 'statuses' | 'onNode'>> = {
  pending: { statuses: ['pending'], onNode: false },
  assigned: { statuses: ['pending'], onNode: true },
  processing: { statuses: ['running', 'completed'] },
  finished: { statuses: ENDED },
  deleted: { statuses: [] },
};

/** HTTP-date, as Flask renders datetimes: `Sun, 22 Nov 2026 11:16:33 GMT`. */
function httpDate(iso: string | null): string | null {
  return iso === null ? null : new Date(iso).toUTCString();
}

/** The fields GET /api/task/<id> and GET /api/task share. `nodeIds`: node ids by name. */
function commonFields(task: TaskRow, nodeIds: ReadonlyMap<string, number>) {
  return {
    clock: task.clock === '' ? null : task.clock.slice(0, 19).replace('T', ' '),
    custom: task.custom,
    enforce_timeout: task.enforce_timeout === 1,
    filename: runsSampleFile(task.category) ? basename(task.target) : null,
    id: task.id,
    machine: task.machine,
    memory: task.memory === 1,
    node_id: task.node === null ? null : (nodeIds.get(task.node) ?? null),
    options: task.options,
    owner: task.owner,
    package: task.package,
    path: task.target,
    platform: task.platform,
    priority: task.priority,
    tags: decodeList(task.tags).join(','),
    // The id on the node that runs it: a remote node's own id, or the same id on a nestbox node.
    task_id: task.node_task_id ?? (task.status === 'pending' ? null : task.id),
    timeout: task.timeout,
  };
}

/** A task of GET /api/task: with its times, without its status. */
export function listedTaskJson(task: TaskRow, nodeIds: ReadonlyMap<string, number>) {
  return {
    ...commonFields(task, nodeIds),
    completed: httpDate(task.completed_on),
    delegated: httpDate(task.delegated_on ?? task.started_on),
    started: httpDate(task.started_on),
    submitted: httpDate(task.added_on),
  };
}

/** GET /api/task/<id>: with its status, without its times. */
export function viewedTaskJson(task: TaskRow, nodeIds: ReadonlyMap<string, number>) {
  return { ...commonFields(task, nodeIds), status: distStatusOf(task) };
}
