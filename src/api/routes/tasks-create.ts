import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../app.js';
import { invalidInput } from '../../errors.js';
import { TaskCreation } from '../../tasks/create.js';
import { parseBoolean, parseTaskParams, parseUrl } from '../form-fields.js';
import { registerFormParsers, withFieldForm, withFileForm, withForm } from '../received-forms.js';
import { classifyString, stringLines } from '../submit-strings.js';
import { Registrar } from './registrar.js';

/**
 * POST /tasks/create/file, /tasks/create/url and /tasks/create/submit (and their /v1 aliases). Forms
 * come as multipart (files are streamed to disk and hashed as they arrive) or urlencoded.
 */
export async function taskCreationRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // A scope of its own, so that only these routes read multipart and urlencoded bodies.
  await app.register(async (scope) => {
    await registerFormParsers(scope, ctx);
    const creation = new TaskCreation(ctx);
    const r = new Registrar(scope);
    r.post('/tasks/create/file', (request, reply) => createFile(ctx, creation, request, reply), { v1: true });
    r.post('/tasks/create/url', (request, reply) => createUrl(ctx, creation, request, reply), { v1: true });
    r.post('/tasks/create/submit', (request, reply) => createSubmit(ctx, creation, request, reply), { v1: true });
  });
}

async function createFile(ctx: AppContext, creation: TaskCreation, request: FastifyRequest, reply: FastifyReply) {
  return withFileForm(ctx, request, reply, async (form) => {
    const file = form.files[0];
    if (!file) throw invalidInput('No file has been given: send it as the multipart file part "file"');
    const params = parseTaskParams(form.fields, ctx.config);
    const unique = parseBoolean(form.fields, 'unique') ?? false;
    return { task_id: await creation.createFileTask(file, params, { unique }) };
  });
}

async function createUrl(ctx: AppContext, creation: TaskCreation, request: FastifyRequest, reply: FastifyReply) {
  return withFieldForm(ctx, request, reply, async (fields) => {
    const url = parseUrl(fields);
    return { task_id: await creation.createUrlTask(url, parseTaskParams(fields, ctx.config)) };
  });
}

async function createSubmit(ctx: AppContext, creation: TaskCreation, request: FastifyRequest, reply: FastifyReply) {
  return withForm(ctx, request, reply, { fileFields: ['file', 'files'], maxFiles: Infinity, holdUpTo: 0 }, async (form) => {
    const params = parseTaskParams(form.fields, ctx.config);
    // Cuckoo takes all `file` parts before all `files` parts.
    const files = [...form.files].sort((a, b) => Number(a.field !== 'file') - Number(b.field !== 'file'));
    const strings = stringLines(form.fields.get('strings')).map(classifyString);
    const result = await creation.submit({ files, strings }, params);
    return { errors: result.errors, submit_id: result.submitId, task_ids: result.taskIds };
  });
}
