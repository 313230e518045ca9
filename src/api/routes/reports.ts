import { createWriteStream } from 'node:fs';
import { mkdtemp, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import yazl from 'yazl';
import type { AppContext } from '../../app.js';
import { internal, invalidInput, notFound } from '../../errors.js';
import type { AnalysisPaths } from '../../storage/layout.js';
import { tarFolder, type TarCompression } from '../../storage/tar-stream.js';
import { fileIn, sendFile, sendNoBody } from '../file-answers.js';
import { idParam, INT, queryParam, safeFileName } from '../params.js';
import type { Registrar } from './registrar.js';

/** Reports, summaries and screenshots, read from storage/analyses/<id>/ (cuckoo-compat §4.9–§4.11). */
export function reportRoutes(r: Registrar, ctx: AppContext): void {
  r.get(
    [`/tasks/report/${INT('task_id')}`, `/tasks/report/${INT('task_id')}/:report_format`],
    async (request, reply) => {
      const paths = ctx.layout.analysis(idParam(request, 'task_id'));
      const format = ((request.params as { report_format?: string }).report_format ?? 'json').toLowerCase();
      return sendReport(reply, paths, format, request, ctx.layout.tmp);
    },
    { v1: true },
  );

  r.get(`/tasks/summary/${INT('task_id')}`, async (request) => summaryOf(await readReport(ctx.layout.analysis(idParam(request, 'task_id')))));

  r.get(
    [`/tasks/screenshots/${INT('task_id')}`, `/tasks/screenshots/${INT('task_id')}/:screenshot`],
    async (request, reply) => {
      const shots = ctx.layout.analysis(idParam(request, 'task_id')).shots;
      const stem = (request.params as { screenshot?: string }).screenshot;
      if (!(await isDirectory(shots))) throw notFound('Task not found', { context: { folder: shots } });
      if (stem === undefined) return sendScreenshotZip(reply, shots);
      return sendScreenshot(reply, shots, safeFileName(request, 'screenshot', 'screenshot name'));
    },
    { v1: true },
  );
}

/** What goes into each tar format, by top-level name in the analysis folder. Maps, so that client words
 * such as `constructor` never find an inherited property. */
const TAR_FORMATS = new Map<string, (name: string) => boolean>([
  ['all', (name) => name !== 'memory.dmp'],
  ['dropped', (name) => name === 'files'],
  ['package_files', (name) => name === 'package_files'],
]);

const TAR_COMPRESSION = new Map<string, TarCompression>([
  ['bz2', 'bz2'],
  ['gz', 'gz'],
  ['tar', 'none'],
]);

async function sendReport(reply: FastifyReply, paths: AnalysisPaths, format: string, request: FastifyRequest, tmp: string) {
  const elements = queryParam(request, 'elements');
  if (format === 'json') {
    // A Buffer, so that the API's JSON serializer leaves these exact bytes alone.
    if (elements) return reply.type('application/json').send(Buffer.from(await reportElement(paths, elements)));
    return sendFile(reply, paths.reportJson, 'application/json', 'Report not found');
  }
  if (format === 'html') {
    if (elements) throw notFound('Get specific field is not available in HTML format, try again with JSON format');
    return sendFile(reply, paths.reportHtml, 'text/html; charset=utf-8', 'Report not found');
  }
  const includeTopLevel = TAR_FORMATS.get(format);
  if (!includeTopLevel) throw invalidInput('Invalid report format', { context: { format } });
  const compression = TAR_COMPRESSION.get(queryParam(request, 'tar') ?? '') ?? 'bz2';
  reply.type('application/x-tar; charset=UTF-8');
  if (request.method === 'HEAD') {
    if (!(await isDirectory(paths.dir))) throw notFound('Report not found', { context: { dir: paths.dir } });
    return sendNoBody(reply);
  }
  const archive = await tarFolder(paths.dir, { compression, includeTopLevel }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw notFound('Report not found', { context: { dir: paths.dir } });
    throw error;
  });
  if (compression === 'none') return reply.send(archive);
  return sendWithLength(reply, archive, tmp);
}

/**
 * A compressed archive is written to a scratch file first, so that it goes out with a Content-Length as
 * Cuckoo's in-memory archives do: AssemblyLine reads that header before it downloads. The file is unlinked
 * once open. An uncompressed archive still streams as tar makes it.
 */
async function sendWithLength(reply: FastifyReply, archive: Readable, tmp: string) {
  const dir = await mkdtemp(join(tmp, 'archive-'));
  const stopTar = () => archive.destroy();
  reply.raw.once('close', stopTar); // the client gave up while the archive was being made
  try {
    await pipeline(archive, createWriteStream(join(dir, 'archive')));
    const handle = await open(join(dir, 'archive'), 'r');
    reply.header('content-length', (await handle.stat()).size);
    return reply.send(handle.createReadStream());
  } finally {
    reply.raw.off('close', stopTar);
    await rm(dir, { recursive: true, force: true });
  }
}

async function readReport(paths: AnalysisPaths): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(paths.reportJson, 'utf8');
  } catch {
    throw notFound('Report not found', { context: { file: paths.reportJson } });
  }
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch (error) {
    throw internal('The stored report is not valid JSON', { cause: error, context: { file: paths.reportJson } });
  }
  if (report === null || typeof report !== 'object' || Array.isArray(report)) {
    throw internal('The stored report is not a JSON object', { context: { file: paths.reportJson } });
  }
  return report as Record<string, unknown>;
}

/** `?elements=<key>`: one top-level key, serialised as Python's json.dumps(sort_keys=True) does (no newline). */
async function reportElement(paths: AnalysisPaths, key: string): Promise<string> {
  const report = await readReport(paths);
  const value = Object.hasOwn(report, key) ? report[key] : undefined;
  if (value === undefined || value === null) throw notFound(`'${key}' not found`);
  return pythonJsonDumps(value);
}

function pythonJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${asciiJson(key)}: ${pythonJsonDumps((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(', ')}}`;
  }
  return asciiJson(value);
}

function asciiJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Keys the summary leaves out. Every one that exists is removed (Cuckoo stops at the first missing one). */
const SUMMARY_OMITS: ReadonlyArray<readonly string[]> = [
  ['procmemory'],
  ['behavior', 'generic'],
  ['behavior', 'apistats'],
  ['behavior', 'processes'],
  ['debug'],
  ['screenshots'],
  ['metadata'],
];

function summaryOf(report: Record<string, unknown>): Record<string, unknown> {
  for (const path of SUMMARY_OMITS) {
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), report);
    if (isObject(parent)) delete parent[path[path.length - 1]!];
  }
  return report;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Screenshots are JPEG (`<stem>.jpg`); a PNG capture with the same stem is served when there is no JPEG. */
async function sendScreenshot(reply: FastifyReply, shots: string, stem: string) {
  const jpeg = fileIn(shots, `${stem}.jpg`);
  if (await isFile(jpeg)) return sendFile(reply, jpeg, 'image/jpeg', 'Screenshot not found!');
  return sendFile(reply, fileIn(shots, `${stem}.png`), 'image/png', 'Screenshot not found!');
}

/** Every file of shots/ in a stored (uncompressed) zip, streamed from disk. */
async function sendScreenshotZip(reply: FastifyReply, shots: string) {
  const entries = await readdir(shots, { withFileTypes: true }).catch(() => undefined);
  if (!entries) throw notFound('Task not found', { context: { folder: shots } });
  reply.type('application/zip');
  if (reply.request.method === 'HEAD') return sendNoBody(reply);
  const zip = new yazl.ZipFile();
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.isFile()) zip.addFile(join(shots, entry.name), entry.name, { compress: false });
  }
  zip.end();
  const output = zip.outputStream as Readable;
  // A file that vanishes while being read ends the download early instead of crashing the service.
  zip.on('error', (error: Error) => output.destroy(error));
  return reply.send(output);
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((stats) => stats.isFile(), () => false);
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then((stats) => stats.isDirectory(), () => false);
}
