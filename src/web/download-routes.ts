import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app.js';
import { fileIn, openStoredFile } from '../api/file-answers.js';
import { hashParam, idParam, INT, safeFileName } from '../api/params.js';
import { notFound } from '../errors.js';
import { sendZipped } from './zip-answer.js';

/**
 * Downloads as zip archives with the password `infected` (zip-answer.ts): the task's sample, a dropped
 * file by its sha256, a memory dump by name and the network capture. Every file is looked up inside
 * the task's own folder (or the sample store) by names checked to stay there; a missing one is a 404.
 */
export async function downloadRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const base = `/ui/api/tasks/${INT('task_id')}/download`;

  app.get(`${base}/sample`, async (request, reply) => {
    const taskId = idParam(request, 'task_id');
    const sha256 = await sampleSha256(ctx, taskId);
    const { handle } = await openStoredFile(ctx.layout.binary(sha256), 'The sample file is not stored');
    return sendZipped(reply, handle, sha256, `${sha256}.zip`);
  });

  app.get(`${base}/dropped/:sha256`, async (request, reply) => {
    const taskId = idParam(request, 'task_id');
    const sha256 = hashParam(request, 'sha256', 64);
    const handle = await droppedFile(ctx.layout.analysis(taskId).files, sha256);
    return sendZipped(reply, handle, sha256, `${sha256}.zip`);
  });

  app.get(`${base}/memory/:name`, async (request, reply) => {
    const taskId = idParam(request, 'task_id');
    const name = safeFileName(request, 'name', 'memory dump name');
    const path = fileIn(ctx.layout.analysis(taskId).memory, `${name}.dmp`);
    const { handle } = await openStoredFile(path, 'Memory dump not found');
    return sendZipped(reply, handle, `${name}.dmp`, `task-${taskId}-memory-${asciiName(name)}.zip`);
  });

  app.get(`${base}/pcap`, async (request: FastifyRequest, reply) => {
    const taskId = idParam(request, 'task_id');
    const { handle } = await openStoredFile(ctx.layout.analysis(taskId).pcap, 'The task has no network capture');
    return sendZipped(reply, handle, 'dump.pcap', `task-${taskId}-dump.pcap.zip`);
  });
}

async function sampleSha256(ctx: AppContext, taskId: number): Promise<string> {
  const task = await ctx.stores.tasks.get(taskId);
  if (!task) throw notFound('Task not found', { context: { taskId } });
  const sample = task.sample_id === null ? undefined : await ctx.stores.samples.get(task.sample_id);
  if (!sample) throw notFound('The task has no sample file', { context: { taskId } });
  return sample.sha256;
}

/**
 * The file of the task's files/ folder whose content has this sha256, opened. The folder holds what
 * the analysis kept (bounded by dropped_files), named by the machine, so the content is what is looked
 * for; a link or anything but a regular file is never opened.
 */
async function droppedFile(folder: string, sha256: string): Promise<FileHandle> {
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names.sort()) {
    const opened = await openStoredFile(fileIn(folder, name), '').catch(() => undefined);
    if (opened === undefined) continue;
    if ((await sha256Of(opened.handle)) === sha256) return opened.handle;
    await opened.handle.close();
  }
  throw notFound('Dropped file not found', { context: { folder, sha256 } });
}

async function sha256Of(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of handle.createReadStream({ start: 0, autoClose: false })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A memory dump name for the Content-Disposition header, which must stay plain ASCII. */
function asciiName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}
