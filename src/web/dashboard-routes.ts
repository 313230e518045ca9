import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.js';
import { DashboardFeed, dashboardOf } from './dashboard.js';
import { EventStreams } from './event-stream.js';

/** GET /ui/api/dashboard and its live form, GET /ui/api/dashboard/stream (`event: dashboard`). */
export async function dashboardRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const feed = new DashboardFeed(ctx);
  const streams = new EventStreams();
  app.addHook('preClose', (done) => {
    feed.stop();
    streams.closeAll();
    done();
  });

  app.get('/ui/api/dashboard', async () => dashboardOf(ctx));

  app.get('/ui/api/dashboard/stream', async (_request, reply) => {
    const first = await dashboardOf(ctx);
    const stream = streams.start(reply);
    stream.send('dashboard', first);
    if (!stream.isClosed) stream.onClose(feed.subscribe((json) => stream.sendJson('dashboard', json)));
  });
}
