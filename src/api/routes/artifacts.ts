import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../app.js';
import type { SampleRow } from '../../db/schema.js';
import { invalidInput, notFound } from '../../errors.js';
import { sampleJson } from '../serialize.js';
import { INT, type Registrar } from './registrar.js';
import { idParam } from './tasks.js';

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

/** A hex digest of the given length; hashes are stored in lowercase, so case does not matter. */
function hashParam(request: FastifyRequest, name: string, length: number): string {
  const value = (request.params as Record<string, string>)[name] ?? '';
  if (value.length !== length || !/^[0-9a-fA-F]+$/.test(value)) throw invalidInput('Invalid lookup term', { context: { [name]: value } });
  return value.toLowerCase();
}

/**
 * A path parameter that names a file inside a known folder. Anything that could leave the folder
 * (separators, NUL, `.` and `..`, however they were encoded in the URL) is refused with a 400.
 */
export function safeFileName(request: FastifyRequest, name: string, what: string): string {
  const value = (request.params as Record<string, string>)[name] ?? '';
  const unsafe = value === '' || value === '.' || value === '..' || /[/\\\0]/.test(value) || value.length > 200;
  if (unsafe) throw invalidInput(`Invalid ${what}`, { context: { [name]: value } });
  return value;
}

/** `folder/name`, checked once more to be directly inside the folder. */
export function fileIn(folder: string, name: string): string {
  const path = join(folder, name);
  if (dirname(path) !== folder || basename(path) !== name) throw invalidInput('Invalid file name', { context: { folder, name } });
  return path;
}

/**
 * Streams a regular file from disk with its length. The last path component is never followed if it is
 * a symbolic link; a missing file, a folder or a link answer 404 with `notFoundMessage`.
 */
export async function sendFile(reply: FastifyReply, path: string, contentType: string, notFoundMessage: string) {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    if (['ENOENT', 'ENOTDIR', 'ELOOP', 'EISDIR'].includes(error.code ?? '')) return undefined;
    throw error;
  });
  if (!handle) throw notFound(notFoundMessage, { context: { path } });
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notFound(notFoundMessage, { context: { path } });
    reply.type(contentType).header('content-length', stats.size);
    if (reply.request.method === 'HEAD') {
      await handle.close();
      return sendNoBody(reply);
    }
    return reply.send(handle.createReadStream());
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Answers a HEAD request to a download route with the headers already set. Fastify would otherwise read
 * (and throw away) the whole stream the GET handler makes, archives and large dumps included.
 */
export function sendNoBody(reply: FastifyReply) {
  return reply.send(Readable.from([]));
}

/** Names of the regular files anywhere below `folder` (Cuckoo's os.walk), sorted; [] if it is missing. */
async function filesBelow(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)
    .sort();
}
