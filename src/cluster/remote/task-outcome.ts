import type { AppContext } from '../../app.js';
import { nowIso } from '../../util/time.js';

/** A task a remote node held ends failed, with the reason in its errors. */
export async function failRemoteTask(ctx: AppContext, taskId: number, reason: string): Promise<void> {
  if (await ctx.stores.tasks.transition(taskId, ['running'], 'failed_analysis', { completed_on: nowIso() })) {
    await ctx.stores.tasks.addError(taskId, reason);
    ctx.log.warn({ task: taskId, reason }, 'a task on a remote node failed');
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
