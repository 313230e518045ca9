import { createHash, randomBytes } from 'node:crypto';

/**
 * Sign-in sessions of the web interface. They are kept in this process's memory: restarting the
 * service signs everyone out, and nodes behind one address do not share them (the token still works
 * everywhere). A session id is 256 random bits; the map is keyed by its digest, so a lookup's timing
 * says nothing about the ids it holds.
 */

export const SESSION_COOKIE = 'nestbox_session';
/** A session ends this long after sign-in, whatever is done with it meanwhile. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;
/** Only holders of the API token can make sessions; this bounds the memory even so. */
const MAX_SESSIONS = 10_000;

export interface Session {
  /** The value state-changing requests must carry in X-Nestbox-CSRF. */
  csrf: string;
  expiresAt: number;
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new session; the id goes into the cookie and is not kept. */
  create(): { id: string; session: Session } {
    this.dropExpired();
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomToken();
    const session = { csrf: randomToken(), expiresAt: this.now() + SESSION_LIFETIME_MS };
    this.sessions.set(keyOf(id), session);
    return { id, session };
  }

  find(id: string | undefined): Session | undefined {
    if (id === undefined || id === '') return undefined;
    const key = keyOf(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt > this.now()) return session;
    this.sessions.delete(key);
    return undefined;
  }

  delete(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(keyOf(id));
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
  }
}

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

function keyOf(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/** One cookie's value from a Cookie header (RFC 6265 §5.4 layout: `a=1; b=2`). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value that hands `id` to the browser (Secure over TLS). */
export function sessionCookie(id: string, expiresAt: number, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that makes the browser forget its session. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}
