import type { FastifyRequest } from 'fastify';
import { invalidInput } from '../errors.js';

/**
 * Route and query parameters, read the way Cuckoo's Flask routes read them. Routes declare digits-only
 * segments with INT, so a parameter they read as an id is digits already.
 */

/** A path segment that only matches digits, like Flask's `<int:x>` converter. */
export const INT = (name: string) => `:${name}(^\\d+$)`;

/** A digits-only path parameter; ids too large to be safe integers cannot exist, so they become -1. */
export function idParam(request: FastifyRequest, name: string): number {
  const value = Number((request.params as Record<string, string>)[name]);
  return Number.isSafeInteger(value) ? value : -1;
}

/** The first value of a query parameter, as Flask's `request.args.get` gives it. */
export function queryParam(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A path parameter as it was given ('' when absent). */
export function stringParam(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name] ?? '';
}

/**
 * A path parameter that names a file inside a known folder. Anything that could leave the folder
 * (separators, NUL, `.` and `..`, however they were encoded in the URL) is refused with a 400.
 */
export function safeFileName(request: FastifyRequest, name: string, what: string): string {
  const value = (request.params as Record<string, string>)[name] ?? '';
  const unsafe = value === '' || value === '.' || value === '..' || /[/\\\0]/.test(value) || value.length > 200;
  if (unsafe) throw invalidInput(`Invalid ${what}`, { context: { [name]: value } });
  return value;
}

/** A hex digest of the given length; hashes are stored in lowercase, so case does not matter. */
export function hashParam(request: FastifyRequest, name: string, length: number): string {
  const value = (request.params as Record<string, string>)[name] ?? '';
  if (value.length !== length || !/^[0-9a-fA-F]+$/.test(value)) throw invalidInput('Invalid lookup term', { context: { [name]: value } });
  return value.toLowerCase();
}
