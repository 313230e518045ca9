import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../errors.js';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface RouteOptions {
  /** Also answer under /v1, as Cuckoo 2.0.7 does for most routes (see cuckoo-compat §1.5). */
  v1?: boolean;
}

/** Registers a route under its path and its aliases. GET routes also answer HEAD, as Flask's do. */
export class Registrar {
  constructor(private readonly app: FastifyInstance) {}

  get(paths: string | string[], handler: Handler, options: RouteOptions = {}): void {
    this.route('GET', paths, handler, options);
  }

  post(paths: string | string[], handler: Handler, options: RouteOptions = {}): void {
    this.route('POST', paths, handler, options);
  }

  private route(method: 'GET' | 'POST', paths: string | string[], handler: Handler, options: RouteOptions): void {
    for (const path of Array.isArray(paths) ? paths : [paths]) {
      for (const prefix of options.v1 ? ['', '/v1'] : ['']) {
        this.app.route({ method, url: prefix + path, handler });
      }
    }
  }
}

/** A path segment that only matches digits, like Flask's `<int:x>` converter. */
export const INT = (name: string) => `:${name}(^\\d+$)`;

/** Reads a digits-only path parameter; ids too large to exist are simply not found. */
export function intParam(request: FastifyRequest, name: string, what = 'Task'): number {
  const raw = (request.params as Record<string, string>)[name];
  const value = Number(raw);
  if (raw === undefined || !Number.isSafeInteger(value)) throw notFound(`${what} not found`);
  return value;
}

export function stringParam(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name] ?? '';
}
