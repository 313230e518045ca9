import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../app.js';
import type { TaskRow } from '../../../db/schema.js';
import { notFinished, notFound } from '../../../errors.js';
import { fileIn, sendFile } from '../../file-answers.js';
import { idParam, INT, safeFileName } from '../../params.js';
import type { Registrar } from '../registrar.js';
import { wasDeleted } from '../../distributed/deleted.js';
import { distributedPaths } from '../../distributed/paths.js';
import { distStatusOf } from '../../distributed/task-json.js';

/** Content types of the report formats nestbox writes; another stored report.<format> is sent as bytes. */
const REPORT_TYPES = new Map([
  ['json', 'application/json'],
  ['html', 'text/html; charset=utf-8'],
]);

/**
 * Results (cuckoo-compat §7.2), served from the main node's storage in Cuckoo's layout: remote nodes'
 * results are downloaded there (cluster/remote/collect.ts), nestbox nodes' are stored there.
 */
export function resultRoutes(r: Registrar, ctx: AppContext): void {
  r.get(distributedPaths(`/report/${INT('task_id')}`), (request, reply) => sendReport(ctx, request, reply, 'json'));
  r.get(distributedPaths(`/report/${INT('task_id')}/:format`), (request, reply) =>
    sendReport(ctx, request, reply, safeFileName(request, 'format', 'report format').toLowerCase()),
  );

  r.get(distributedPaths(`/pcap/${INT('task_id')}`), async (request, reply) => {
    const task = await finishedTask(ctx, request, 'Task files has been deleted');
    return sendFile(reply, ctx.layout.analysis(task.id).pcap, 'application/octet-stream', 'Pcap file not found');
  });
}

async function sendReport(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, format: string) {
  const task = await finishedTask(ctx, request, 'Task report has been deleted');
  const reports = ctx.layout.analysis(task.id).reports;
  return sendFile(reply, fileIn(reports, `report.${format}`), REPORT_TYPES.get(format) ?? 'application/octet-stream', 'Report format not found');
}

/** The task, once it has finished; `deletedMessage` for a task that was deleted. */
async function finishedTask(ctx: AppContext, request: FastifyRequest, deletedMessage: string): Promise<TaskRow> {
  const taskId = idParam(request, 'task_id');
  const task = await ctx.stores.tasks.get(taskId);
  if (!task) throw notFound((await wasDeleted(ctx, taskId)) ? deletedMessage : 'Task not found');
  if (distStatusOf(task) !== 'finished') throw notFinished('Task not finished yet');
  return task;
}
