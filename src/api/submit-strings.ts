import type { SubmittedString } from '../tasks/create.js';
import { bareWebAddress, isHttpUrl } from './web-address.js';

/**
 * The `strings` field of create/submit: one item per line. A line becomes a task only when it is a
 * well-formed md5, sha1 or sha256 digest (fetched by hash), an http(s) URL with a real host, or a web
 * address without a scheme (a domain name or IPv4 address, opened as http://). Anything else is a
 * per-item error with Cuckoo's wording, so junk such as a line of digits never becomes a task.
 */

const HASH = /^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64})$/i;

export function classifyString(line: string): SubmittedString {
  if (HASH.test(line)) return { kind: 'hash', hash: line.toLowerCase() };
  if (isHttpUrl(line)) return { kind: 'url', url: line };
  const bare = bareWebAddress(line);
  if (bare !== undefined) return { kind: 'url', url: bare };
  return { kind: 'error', message: `'${line}' was neither a valid hash or url` };
}

/** The non-blank lines of `strings`, trimmed. */
export function stringLines(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw.split('\n').map((line) => line.trim()).filter((line) => line !== '');
}
