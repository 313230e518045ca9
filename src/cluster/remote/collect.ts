import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppContext } from '../../app.js';
import type { NodeRow, TaskRow } from '../../db/schema.js';
import type { Report } from '../../report/report-types.js';
import { indexReport } from '../../search/index-report.js';
import { nowIso } from '../../util/time.js';
import { RemoteNodeClient } from './client.js';
import { failRemoteTask, messageOf } from './task-outcome.js';

/**
 * Looks at the tasks a remote node runs. A reported one has its report and pcap downloaded into the
 * main node's storage (storage/analyses/<id>/reports/report.json, dump.pcap) and becomes reported here,
 * with the report's score; the node then deletes it. One that failed there, or that the node no longer
 * has, fails here with the reason.
 */
export async function collectFinished(ctx: AppContext, node: NodeRow): Promise<void> {
  const client = new RemoteNodeClient(node);
  for (const task of await ctx.stores.distributedTasks.onNodes('running', [node.name])) {
    const nodeTaskId = task.node_task_id;
    if (nodeTaskId === null) continue;
    const view = await client.view(nodeTaskId);
    if (view === undefined) {
      await failRemoteTask(ctx, task.id, `Node ${node.name} no longer has its task ${nodeTaskId}`);
    } else if (view.status === 'reported') {
      await collect(ctx, client, node, task, nodeTaskId);
    } else if (view.status.startsWith('failed_') || view.status === 'recovered') {
      const errors = view.errors.length > 0 ? `: ${view.errors.join('; ')}` : '';
      await failRemoteTask(ctx, task.id, `On node ${node.name} the task (${nodeTaskId} there) ended ${view.status}${errors}`);
    }
  }
}

async function collect(ctx: AppContext, client: RemoteNodeClient, node: NodeRow, task: TaskRow, nodeTaskId: number): Promise<void> {
  // Assembled aside and renamed into place, so analyses/<id> is never seen half-written.
  const staging = await mkdtemp(join(ctx.layout.analyses, `.remote-${task.id}-`));
  const folder = ctx.layout.analysis(task.id).dir;
  try {
    await mkdir(join(staging, 'reports'));
    if (!(await client.download(`tasks/report/${nodeTaskId}/json`, join(staging, 'reports', 'report.json')))) {
      await failRemoteTask(ctx, task.id, `Node ${node.name} reported its task ${nodeTaskId} but serves no report for it`);
      return;
    }
    await client.download(`pcap/get/${nodeTaskId}`, join(staging, 'dump.pcap'));
    const report = await readReport(join(staging, 'reports', 'report.json'));
    await rm(folder, { recursive: true, force: true });
    await rename(staging, folder);
    await indexReport(ctx, task.id, report);
    const score = typeof report.info?.score === 'number' ? report.info.score : null;
    if (!(await ctx.stores.tasks.transition(task.id, ['running'], 'reported', { completed_on: nowIso(), score }))) {
      // The task was deleted or changed meanwhile: its results must not outlive it.
      await rm(folder, { recursive: true, force: true });
    }
  } catch (error) {
    if (error instanceof SyntaxError) {
      await failRemoteTask(ctx, task.id, `The report node ${node.name} sent for its task ${nodeTaskId} is not JSON: ${messageOf(error)}`);
      return;
    }
    throw error;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  await client.deleteTask(nodeTaskId).catch((error: unknown) =>
    ctx.log.warn({ err: error, task: task.id, node: node.name, nodeTaskId }, 'the remote node did not delete a collected task'),
  );
}

async function readReport(path: string): Promise<Report> {
  const report: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (report === null || typeof report !== 'object' || Array.isArray(report)) throw new SyntaxError('the report is not a JSON object');
  return report as Report;
}
