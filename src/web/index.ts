import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.js';
import { archivePreviewRoutes } from './archive-preview-routes.js';
import { callsRoutes } from './calls-routes.js';
import { dashboardRoutes } from './dashboard-routes.js';
import { downloadRoutes } from './download-routes.js';
import { liveRoutes } from './live-routes.js';
import { searchRoutes } from './search-routes.js';
import { sessionRoutes } from './session-routes.js';
import { shellRoutes } from './shell-routes.js';
import { taskListRoutes } from './task-list-routes.js';

/** Every part of the web interface, registered in one place: its pages under /ui/, its JSON under /ui/api/. */
export async function registerWeb(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await shellRoutes(app);
  await sessionRoutes(app);
  await dashboardRoutes(app, ctx);
  await taskListRoutes(app, ctx);
  await archivePreviewRoutes(app, ctx);
  await downloadRoutes(app, ctx);
  callsRoutes(app, ctx);
  liveRoutes(app, ctx);
  searchRoutes(app, ctx);
}
