import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../app.js';
import { receiveResults, uploadOf } from '../../cluster/transfer/receive-results.js';
import { CLUSTER_PREFIX, nodeCredential, RESULTS_TYPE, SHA256_HEADER } from '../../cluster/transfer/protocol.js';
import { runsSampleFile } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { LocalResultStore } from '../../storage/result-store.js';
import { abandonBody } from '../abandon-body.js';
import { requireNodeCredential } from '../auth.js';
import { sendFile } from '../file-answers.js';
import { idParam, INT } from '../params.js';

/**
 * The main node's routes for its workers (cluster/transfer/protocol.ts): a task's sample out, a task's
 * results in. Only the node credential opens them.
 */
export async function clusterTransferRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const store = new LocalResultStore(ctx.layout);
  // Before the server listens, so no upload is under way.
  await store.sweep();
  await app.register(async (scope) => {
    scope.addHook('onRequest', requireNodeCredential(nodeCredential(ctx.config)));
    // The archive is read as a stream by the handler, never buffered.
    scope.addContentTypeParser(RESULTS_TYPE, (_request, _payload, done) => done(null));
    scope.get(`${CLUSTER_PREFIX}/tasks/${INT('task_id')}/sample`, (request, reply) => sendSample(ctx, request, reply));
    scope.put(`${CLUSTER_PREFIX}/tasks/${INT('task_id')}/results`, async (request, reply) => {
      const taskId = idParam(request, 'task_id');
      try {
        const extracted = await receiveResults(ctx, store, taskId, request.raw, uploadOf(request.headers));
        return { message: `The results of task ${taskId} are stored`, ...extracted };
      } catch (error) {
        abandonBody(request, reply);
        throw error;
      }
    });
  });
}

async function sendSample(ctx: AppContext, request: FastifyRequest, reply: FastifyReply) {
  const taskId = idParam(request, 'task_id');
  const task = await ctx.stores.tasks.get(taskId);
  if (!task) throw notFound(`Task ${taskId} not found`);
  const sample = runsSampleFile(task.category) && task.sample_id !== null ? await ctx.stores.samples.get(task.sample_id) : undefined;
  if (!sample) throw notFound(`Task ${taskId} has no sample file`);
  reply.header(SHA256_HEADER, sample.sha256);
  return sendFile(reply, ctx.layout.binary(sample.sha256), 'application/octet-stream', `The sample of task ${taskId} is not stored`);
}
