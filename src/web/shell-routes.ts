import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { notFound, unavailable } from '../errors.js';
import { PAGE_HEADERS } from './content-security.js';

/** Where scripts/build-web.mjs puts the bundled interface (dist/web, beside dist/src). */
const WEB_ROOT = fileURLToPath(new URL('../../web/', import.meta.url));

/**
 * The single-page application: its bundled assets under /ui/assets/, and its page (index.html) for
 * /ui/ and every deep link below it, so that /ui/analysis/12 opens on reload. / leads to /ui/.
 */
export async function shellRoutes(app: FastifyInstance): Promise<void> {
  await app.register(fastifyStatic, {
    root: `${WEB_ROOT}assets`,
    prefix: '/ui/assets/',
    decorateReply: true,
    index: false,
    list: false,
    dotfiles: 'deny',
    setHeaders: (reply) => {
      reply.headers(PAGE_HEADERS);
    },
  });
  app.get('/', (_request, reply) => reply.redirect('/ui/', 302));
  app.get('/ui', (_request, reply) => reply.redirect('/ui/', 302));
  app.get('/ui/*', (request, reply) => {
    if (request.url.startsWith('/ui/api/')) throw notFound(`no such endpoint of the web interface: ${request.url.split('?')[0]}`);
    return page(reply);
  });
}

function page(reply: FastifyReply) {
  if (!existsSync(`${WEB_ROOT}index.html`)) throw unavailable('the web interface is not built: run scripts/setup.sh (it runs scripts/build-web.mjs)');
  reply.headers(PAGE_HEADERS);
  return reply.type('text/html; charset=utf-8').sendFile('index.html', WEB_ROOT);
}
