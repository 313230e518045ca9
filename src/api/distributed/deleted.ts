import type { AppContext } from '../../app.js';

/**
 * Whether a task was deleted. A deleted task has no row left, but ids are never reused (migration
 * 0001): an id that was given out and has no row belonged to a deleted task.
 */
export async function wasDeleted(ctx: AppContext, taskId: number): Promise<boolean> {
  return taskId > 0 && taskId <= (await ctx.stores.distributedTasks.highestIssuedId()) && !(await ctx.stores.tasks.get(taskId));
}
