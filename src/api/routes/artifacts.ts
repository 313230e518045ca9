import { readdir } from 'node:fs/promises';
import type { AppContext } from '../../app.js';
import type { SampleRow } from '../../db/schema.js';
import { invalidInput, notFound } from '../../errors.js';
import { fileIn, sendFile } from '../file-answers.js';
import { hashParam, idParam, INT, safeFileName } from '../params.js';
import { sampleJson } from '../serialize.js';
import type { Registrar } from './registrar.js';

/** Raw downloads are labelled as Flask's send_file labels them in Cuckoo. */
export const OCTET_STREAM = 'application/octet-stream; charset=UTF-8';

/** Memory dumps, network captures and samples (cuckoo-compat §4.14–§4.16, §4.19, §4.20). */
export function artifactRoutes(r: Registrar, ctx: AppContext): void {
  r.get(`/memory/list/${INT('task_id')}`, async (request) => {
    const names = await filesBelow(ctx.layout.analysis(idParam(request, 'task_id')).memory);
    if (names.length === 0) throw notFound('Memory dump not found');
    return { dump_files: names.map((name) => name.replaceAll('.dmp', '')) };
  });

  r.get(`/memory/get/${INT('task_id')}/:pid`, async (request, reply) => {
    const pid = safeFileName(request, 'pid', 'memory dump name');
    const folder = ctx.layout.analysis(idParam(request, 'task_id')).memory;
    return sendFile(reply, fileIn(folder, `${pid}.dmp`), OCTET_STREAM, 'Memory dump not found');
  });

  r.get(
    `/pcap/get/${INT('task_id')}`,
    async (request, reply) => sendFile(reply, ctx.layout.analysis(idParam(request, 'task_id')).pcap, OCTET_STREAM, 'File not found'),
    { v1: true },
  );

  r.get('/files/view/md5/:md5', async (request) => sampleView(ctx, await ctx.stores.samples.findByMd5(hashParam(request, 'md5', 32))), {
    v1: true,
  });
  r.get(
    '/files/view/sha256/:sha256',
    async (request) => sampleView(ctx, await ctx.stores.samples.findBySha256(hashParam(request, 'sha256', 64))),
    { v1: true },
  );
  r.get(
    `/files/view/id/${INT('sample_id')}`,
    async (request) => {
      const id = idParam(request, 'sample_id');
      if (id === 0) throw invalidInput('Invalid lookup term');
      return sampleView(ctx, await ctx.stores.samples.get(id));
    },
    { v1: true },
  );

  r.get(
    '/files/get/:sha256',
    async (request, reply) => sendFile(reply, ctx.layout.binary(hashParam(request, 'sha256', 64)), OCTET_STREAM, 'File not found'),
    { v1: true },
  );
}

async function sampleView(ctx: AppContext, sample: SampleRow | undefined) {
  if (!sample) throw notFound('File not found');
  return { sample: { ...sampleJson(sample), tasks: await ctx.stores.tasks.taskIdsOfSample(sample.id) } };
}

/** Names of the regular files anywhere below `folder` (Cuckoo's os.walk), sorted; [] if it is missing. */
async function filesBelow(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)
    .sort();
}
