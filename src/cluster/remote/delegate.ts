import type { AppContext } from '../../app.js';
import type { NodeRow } from '../../db/schema.js';
import { nowIso } from '../../util/time.js';
import { RemoteNodeClient, RemoteNodeError } from './client.js';
import { failRemoteTask, messageOf } from './task-outcome.js';

/**
 * Hands the pending tasks pinned to a remote node to it, as Cuckoo's distributed master does: each is
 * taken (pending -> running, so no other main process hands it out too), created on the node with its
 * stored fields, and the node's id for it recorded. A node that does not answer gets the task back in
 * the queue for the next look; a node that refuses it fails it.
 */
export async function delegatePending(ctx: AppContext, node: NodeRow): Promise<void> {
  const { tasks, distributedTasks } = ctx.stores;
  const pending = await distributedTasks.onNodes('pending', [node.name]);
  if (pending.length === 0) return;
  // The node as it is now, read after its tasks: a node changed before a task was made (a new URL, disabled)
  // is handed that task as changed, not as the look that began before the change saw it.
  const current = await ctx.stores.distributedNodes.get(node.name);
  if (current?.enabled !== 1) return;
  const client = new RemoteNodeClient(current);
  for (const task of pending) {
    const now = nowIso();
    if (!(await tasks.transition(task.id, ['pending'], 'running', { started_on: now, delegated_on: now }))) continue;
    try {
      const nodeTaskId = await client.createTask(task);
      await tasks.update(task.id, { node_task_id: nodeTaskId });
      ctx.log.info({ task: task.id, node: node.name, nodeTaskId }, 'task handed to a remote node');
    } catch (error) {
      if (error instanceof RemoteNodeError && error.unreachable) {
        await tasks.transition(task.id, ['running'], 'pending', { started_on: null, delegated_on: null });
        throw error;
      }
      await failRemoteTask(ctx, task.id, `Handing the task to node ${node.name} failed: ${messageOf(error)}`);
    }
  }
}

/**
 * Tasks taken for a remote node whose creation there was never recorded (the main node stopped in
 * between) go back to the queue. The node may hold a copy that nobody collects.
 */
export async function requeueUnrecorded(ctx: AppContext, nodes: readonly NodeRow[]): Promise<void> {
  const running = await ctx.stores.distributedTasks.onNodes('running', nodes.map((node) => node.name));
  for (const task of running.filter((candidate) => candidate.node_task_id === null)) {
    await ctx.stores.tasks.transition(task.id, ['running'], 'pending', { started_on: null, delegated_on: null });
    await ctx.stores.tasks.addError(task.id, `Handing the task to node ${task.node} was interrupted by a restart; it is handed again`, 'recovered');
  }
}
