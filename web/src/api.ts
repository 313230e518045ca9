/** The interface's only way to the server: same-origin JSON, with the session's CSRF token on changes. */

export interface Session {
  authRequired: boolean;
  authenticated: boolean;
  csrf: string | null;
}

/** An answer of the server that is not 2xx, with its `{"message"}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrf: string | null = null;

/** Remembers the session's CSRF token (from GET or POST /ui/api/session). */
export function rememberCsrf(token: string | null): void {
  csrf = token;
}

export function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  return request<T>('GET', path, undefined, signal);
}

/** A state-changing request: JSON body (or FormData for uploads), with the CSRF header. */
export function send<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  return request<T>(method, path, body);
}

async function request<T>(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { 'x-requested-with': 'XMLHttpRequest' };
  if (method !== 'GET' && csrf) headers['x-nestbox-csrf'] = csrf;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const response = await fetch(path, { method, headers, body: payload, signal, credentials: 'same-origin' });
  const text = await response.text();
  const parsed = text === '' ? null : safeParse(text);
  if (!response.ok) throw new ApiError(response.status, messageOf(parsed) ?? `${response.status} ${response.statusText}`);
  return parsed as T;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function messageOf(body: unknown): string | null {
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') return body.message;
  return null;
}
