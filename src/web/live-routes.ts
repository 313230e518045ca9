import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../app.js';
import { idParam, INT } from '../api/params.js';
import { notFound } from '../errors.js';
import { type EventStream, EventStreams } from './event-stream.js';
import { LIVE_TICK_MS, LiveFeed } from './live-feed.js';

/** Bytes a client may leave unread before its stream is ended: a stalled tab must not hold the server's memory. */
const MAX_UNREAD_BYTES = 8 << 20;

/**
 * GET /ui/api/tasks/:id/live: a task's run as server-sent events (live-feed.ts says which), ending with
 * `end` once the task is reported or failed, at once for a task that already is. Streams end when their
 * client goes away and before the server closes.
 */
export function liveRoutes(app: FastifyInstance, ctx: AppContext): void {
  const streams = new EventStreams();
  app.addHook('preClose', (done) => {
    streams.closeAll();
    done();
  });

  app.get(`/ui/api/tasks/${INT('id')}/live`, async (request, reply) => {
    const taskId = idParam(request, 'id');
    if (!(await ctx.stores.tasks.get(taskId))) throw notFound('Task not found', { context: { taskId } });
    const stream = streams.start(reply);
    const feed = new LiveFeed(ctx, taskId, (event, data) => stream.send(event, data));
    follow(feed, stream, reply).catch((error: unknown) => {
      request.log.warn({ err: error, taskId }, 'the live stream of a task failed');
      stream.close();
    });
  });
}

async function follow(feed: LiveFeed, stream: EventStream, reply: FastifyReply): Promise<void> {
  const stop = new AbortController();
  stream.onClose(() => stop.abort());
  while (!stream.isClosed) {
    if (!(await feed.step()) || reply.raw.writableLength > MAX_UNREAD_BYTES) break;
    await sleep(LIVE_TICK_MS, undefined, { signal: stop.signal, ref: false }).catch(() => undefined);
  }
  stream.close();
}
