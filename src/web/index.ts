import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.js';
import { sessionRoutes } from './session-routes.js';
import { shellRoutes } from './shell-routes.js';

/** Every part of the web interface, registered in one place: its pages under /ui/, its JSON under /ui/api/. */
export async function registerWeb(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await shellRoutes(app);
  sessionRoutes(app, ctx);
}
