import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app.js';
import { uploadBaseName } from '../api/form-fields.js';
import { invalidInput } from '../errors.js';
import { archiveKindOf, archiveLimits, unpackArchive } from '../storage/archives.js';
import { removeFile, saveFilePart } from '../storage/upload.js';

/**
 * POST /ui/api/archive/preview: the files a submitted archive would become (one task each), listed
 * before submitting. The archive is unpacked exactly as task creation unpacks it (same limits,
 * passwords and nesting) into a private folder that is removed at once; nothing is stored.
 */
export async function archivePreviewRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: ctx.config.api.upload_limit, files: 1, parts: 10 } });
    scope.post('/ui/api/archive/preview', async (request) => ({ members: await previewUpload(ctx, request) }));
  });
}

async function previewUpload(ctx: AppContext, request: FastifyRequest) {
  if (!request.isMultipart()) throw invalidInput('Send the archive as a multipart/form-data file part');
  const part = await request.file();
  if (part === undefined) throw invalidInput('No file has been given');
  const upload = join(ctx.layout.tmp, `preview-${randomUUID()}`);
  try {
    await saveFilePart(part.file, upload, { limit: ctx.config.api.upload_limit });
    return await membersOf(ctx, upload, uploadBaseName(part.filename));
  } finally {
    await removeFile(upload);
  }
}

async function membersOf(ctx: AppContext, path: string, name: string) {
  const fileType = await ctx.fileType.detect(path);
  const kind = archiveKindOf(fileType);
  if (kind === undefined) throw invalidInput(`${name} is not an archive nestbox unpacks (${fileType})`);
  if (ctx.config.archives.max_depth === 0) throw invalidInput('Archives are submitted as they are: archives.max_depth is 0');
  const workDir = await mkdtemp(join(ctx.layout.tmp, 'preview-'));
  try {
    const files = await unpackArchive({ path, name, kind }, workDir, archiveLimits(ctx.config.archives), (file) => ctx.fileType.detect(file));
    return files.map((file) => ({ name: file.member, size: file.hashes.size, type: file.fileType, sha256: file.hashes.sha256 }));
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
