import type { TaskRow } from '../db/schema.js';

/**
 * The two points where a worker of a cluster exchanges files with the main node (the cluster-transfer
 * part fills them in). On one host, or when nothing is configured, both do nothing: the sample is
 * already local and the results stay where they were written.
 */
export interface WorkerTransfer {
  /** Before the run: make the task's sample available on this node (fetch it from the main node). */
  makeSampleLocal(task: TaskRow): Promise<void>;
  /** After processing: hand the task's results over to the main node. */
  handOverResults(taskId: number): Promise<void>;
}

export const localOnly: WorkerTransfer = {
  makeSampleLocal: () => Promise.resolve(),
  handOverResults: () => Promise.resolve(),
};
