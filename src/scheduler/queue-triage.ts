import type { AppContext } from '../app.js';
import type { MachineRow, TaskRow } from '../db/schema.js';
import { nowIso } from '../util/time.js';
import { describeWish, machineMatcher, wishOf } from './matching.js';

/** How many tasks at the head of the queue are looked at per pass. */
const QUEUE_HEAD = 100;

/**
 * Looks at the head of the queue this node may take from and returns the tasks some live node could run
 * now. A task no enabled machine of the cluster fits fails at once. A task whose only fitting machines
 * are on nodes that are down (lease expired) waits for them, and says so once in its errors; `noted`
 * remembers the tasks known to say so already, which spares asking again on every pass.
 */
export async function triageQueue(ctx: AppContext, noted: Set<number> = new Set()): Promise<TaskRow[]> {
  const { stores, node } = ctx;
  const machines = await stores.machines.list();
  const pending = await stores.tasks.queue(QUEUE_HEAD, node.node);
  const downSince = ctx.databaseKind === 'postgres' ? await nodesDown(ctx) : () => undefined;
  const fits = machineMatcher(machines);
  const runnable: TaskRow[] = [];
  for (const task of pending) {
    const wish = wishOf(task);
    const fitting = machines.filter((machine) => fits(machine, wish));
    if (fitting.length === 0) await failUnrunnable(ctx, task, `No configured machine matches ${describeWish(wish)}`);
    else if (fitting.every((machine) => downSince(machine.node) !== undefined)) await noteWaiting(ctx, task, describeWish(wish), fitting, downSince, noted);
    else runnable.push(task);
  }
  return runnable;
}

export async function failUnrunnable(ctx: AppContext, task: TaskRow, reason: string): Promise<void> {
  const failed = await ctx.stores.tasks.transition(task.id, ['pending'], 'failed_analysis', { completed_on: nowIso() });
  if (failed) await ctx.stores.tasks.addError(task.id, reason);
}

/** When each node that is down has been down since (its lease's end); undefined for nodes that are up. */
async function nodesDown(ctx: AppContext): Promise<(node: string) => string | undefined> {
  const leases = await ctx.stores.nodes.leases();
  const now = nowIso();
  return (node) => {
    // Machines from before the cluster, and this node's own, are up as long as this node runs.
    if (node === '' || node === ctx.node.node) return undefined;
    const lease = leases.get(node);
    if (lease !== undefined && lease !== null && lease > now) return undefined;
    return lease ?? 'an unknown time';
  };
}

async function noteWaiting(
  ctx: AppContext,
  task: TaskRow,
  wish: string,
  fitting: readonly MachineRow[],
  downSince: (node: string) => string | undefined,
  noted: Set<number>,
): Promise<void> {
  if (noted.has(task.id)) return;
  noted.add(task.id);
  const nodes = [...new Set(fitting.map((machine) => machine.node))];
  const where = nodes.map((node) => `node ${node}, which is down since ${downSince(node)}`).join('; ');
  await ctx.stores.tasks.noteWaiting(task.id, `waiting: the only machines that fit (${wish}) are on ${where}`);
}
