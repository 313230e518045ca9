import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app.js';
import { invalidInput, tooLarge } from '../errors.js';
import { removeFile, saveFilePart } from '../storage/upload.js';
import type { StagedFile } from '../tasks/create.js';
import { abandonBody } from './abandon-body.js';
import { FormFields, uploadBaseName } from './form-fields.js';
import { RequestBudget } from './request-budget.js';

/*
 * The forms of the routes that create tasks (routes/tasks-create.ts) and of Cuckoo's distributed API
 * (routes/distributed/): multipart, with files streamed to disk and hashed as they arrive, or urlencoded.
 */

/** Room for the form fields around the one file of /tasks/create/file when checking Content-Length. */
const FORM_ALLOWANCE = 1024 * 1024;
const FIELD_LIMIT = 1024 * 1024;
/** Largest upload of create/file kept in memory: a sample stored before is then never written again. */
const HELD_UPLOAD = 64 * 1024;

/**
 * Lets a scope read multipart forms (files streamed to disk by withForm) and urlencoded ones. The task
 * creation routes and Cuckoo's distributed API (routes/distributed/) read their forms this way.
 */
export async function registerFormParsers(scope: FastifyInstance, ctx: AppContext): Promise<void> {
  await scope.register(multipart, {
    preservePath: true,
    limits: { fileSize: ctx.config.api.upload_limit, fieldSize: FIELD_LIMIT, files: 1000, parts: 2000 },
  });
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, FormFields.fromQueryString(body as string));
  });
}

/** A form with at most one file, in the part `file` (POST /tasks/create/file, POST /api/task). */
export async function withFileForm<T>(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, use: (form: ReceivedForm) => Promise<T>): Promise<T> {
  const limit = ctx.config.api.upload_limit;
  const length = Number(request.headers['content-length']);
  if (Number.isFinite(length) && length > limit + FORM_ALLOWANCE) {
    abandonBody(request, reply);
    throw tooLarge(`The request of ${length} bytes is larger than the upload limit of ${limit} bytes (api.upload_limit)`);
  }
  return withForm(ctx, request, reply, { fileFields: ['file'], maxFiles: 1, holdUpTo: HELD_UPLOAD }, use);
}

/** A form of fields only (file parts are read and dropped). */
export async function withFieldForm<T>(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, use: (fields: FormFields) => Promise<T>): Promise<T> {
  return withForm(ctx, request, reply, { fileFields: [], maxFiles: 0, holdUpTo: 0 }, (form) => use(form.fields));
}

interface ReceivedFile extends StagedFile {
  field: string;
}

export interface ReceivedForm {
  fields: FormFields;
  files: ReceivedFile[];
}

export interface FormOptions {
  /** Names of the file parts kept; other file parts are read and dropped. */
  fileFields: readonly string[];
  maxFiles: number;
  /** Files up to this size stay in memory until the task creation needs them on disk (see StagedFile). */
  holdUpTo: number;
}

/**
 * Reads the form (files staged under tmppath), runs `use`, and removes the staged files whatever
 * happens: the files that matter are linked into storage by then.
 */
export async function withForm<T>(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  options: FormOptions,
  use: (form: ReceivedForm) => Promise<T>,
): Promise<T> {
  // Uploads are staged as single files (no folder per request: every file-system call counts here).
  const stagingPath = () => join(ctx.layout.tmp, `upload-${randomUUID()}`);
  // Files fully received; a file that fails part-way removes itself.
  const received: ReceivedFile[] = [];
  try {
    const budget = new RequestBudget(ctx.config.api.request_limit, ctx.config.api.upload_limit);
    budget.checkDeclared(contentLength(request));
    const form = request.isMultipart()
      ? await readMultipart(request, options, budget, stagingPath, received)
      : { fields: bodyFields(request), files: [] };
    return await use(form);
  } catch (error) {
    abandonBody(request, reply);
    throw error;
  } finally {
    // A file still held in memory was never written.
    await Promise.all(received.filter((file) => file.content === undefined).map((file) => removeFile(file.path)));
  }
}

async function readMultipart(
  request: FastifyRequest,
  options: FormOptions,
  budget: RequestBudget,
  stagingPath: () => string,
  files: ReceivedFile[],
): Promise<ReceivedForm> {
  const fields = new FormFields();
  for await (const part of request.parts()) {
    if (part.type === 'field') {
      if (part.valueTruncated) throw invalidInput(`${part.fieldname} is longer than ${FIELD_LIMIT} bytes`);
      const value = String(part.value);
      budget.take(Buffer.byteLength(value));
      fields.add(part.fieldname, value);
      continue;
    }
    if (!options.fileFields.includes(part.fieldname) || files.length >= options.maxFiles) {
      // Not a file this endpoint reads: let it pass.
      for await (const chunk of part.file) budget.take((chunk as Buffer).length);
      continue;
    }
    const name = uploadBaseName(part.filename);
    const path = stagingPath();
    const { hashes, content } = await saveFilePart(part.file, path, budget.fileLimits(contentLength(request)), options.holdUpTo);
    files.push({ field: part.fieldname, path, name, hashes, content });
    budget.take(hashes.size);
  }
  return { fields, files };
}

/** Fields of an urlencoded body; no body means no fields. Other bodies (JSON...) are not forms. */
function bodyFields(request: FastifyRequest): FormFields {
  if (request.body instanceof FormFields) return request.body;
  if (request.body === undefined || request.body === null) return new FormFields();
  throw invalidInput('Send the fields as multipart/form-data or application/x-www-form-urlencoded');
}

function contentLength(request: FastifyRequest): number | undefined {
  const length = Number(request.headers['content-length']);
  return Number.isSafeInteger(length) ? length : undefined;
}
