import http from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { AppContext } from '../app.js';
import { AccessControl, registerAuth } from './auth.js';
import { registerErrorHandlers } from './error-handler.js';
import { SECURITY_HEADERS } from './headers.js';
import { cuckooJson } from './json.js';
import { ResponseCache } from './response-cache.js';
import { registerRoutes } from './routes/index.js';
import type { ServiceRouteOptions } from './routes/service.js';
import { answerClientError, answerUnroutedRequests, frameworkErrorAnswerer } from './unrouted.js';

/** How the server is run: its routes' needs (GET /exit's handler). */
export type ServerOptions = ServiceRouteOptions;

/** Builds the REST API: Cuckoo 2.0.7's routes, JSON format, headers and authentication. */
export async function buildServer(ctx: AppContext, options: ServerOptions = {}): Promise<FastifyInstance> {
  const access = new AccessControl(ctx.config.api.token);
  const authorized = access.authorized;
  const cache = new ResponseCache(() => ctx.dataChangeToken(), authorized);
  const app = Fastify({
    serverFactory: (handler, settings) => {
      const server = serverWith(settings, (request, response) => {
        if (!cache.serve(request, response)) handler(request, response);
      });
      answerUnroutedRequests(server, authorized);
      return server;
    },
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkErrorAnswerer(authorized),
    loggerInstance: ctx.log.child({ component: 'api' }) as FastifyBaseLogger,
    // No "incoming request" / "request completed" lines (Fastify 5's replacement of its deprecated
    // top-level disableRequestLogging, which printed a deprecation warning on every start).
    logController: new LogController({ disableRequestLogging: true }),
    // Uploads are streamed to disk by the multipart handler; this bounds the other bodies only.
    bodyLimit: 1024 * 1024,
    return503OnClosing: false,
    // No logger child per request (it costs more than a cached answer): the few lines logged for
    // requests (error-handler.ts) carry their own context.
    childLoggerFactory: (logger) => logger,
  });

  // Hooks take callbacks rather than returning promises: they run on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.serializer(request.headers['x-requested-with'] === 'XMLHttpRequest' ? compactJson : prettyJson);
    reply.type('application/json');
    reply.headers(SECURITY_HEADERS);
    done();
  });
  registerErrorHandlers(app);
  registerAuth(app, access);
  cache.register(app);
  await registerRoutes(app, ctx, options);
  return app;
}

/** The HTTP server Fastify would make, with its timeouts, around our own request handler. */
function serverWith(settings: FastifyServerOptions, handle: http.RequestListener): http.Server {
  const server = http.createServer(handle);
  if (settings.keepAliveTimeout !== undefined) server.keepAliveTimeout = settings.keepAliveTimeout;
  if (settings.requestTimeout !== undefined) server.requestTimeout = settings.requestTimeout;
  server.setTimeout(settings.connectionTimeout ?? 0);
  return server;
}

const prettyJson = (payload: unknown) => cuckooJson(payload, false);
const compactJson = (payload: unknown) => cuckooJson(payload, true);
