import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson, send, rememberCsrf, type Session } from '../api';
import { SignInPage } from '../pages/sign-in';

/** Shows the sign-in page until the session is authenticated (at once when authentication is off). */
export function SessionGate({ children }: { children: ComponentChildren }) {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);

  const accept = (next: Session) => {
    rememberCsrf(next.csrf);
    setSession(next);
  };

  useEffect(() => {
    getJson<Session>('/ui/api/session').then(accept, (e: Error) => setError(e.message));
  }, []);

  const signIn = async (token: string) => {
    try {
      accept(await send<Session>('POST', '/ui/api/session', { token }));
      setError(null);
    } catch (e) {
      setError(e instanceof ApiError && e.status === 401 ? 'That token is not the one configured.' : (e as Error).message);
    }
  };

  if (session === null) return error ? <p class="error">{error}</p> : <p class="muted">Loading…</p>;
  if (session.authRequired && !session.authenticated) return <SignInPage onSubmit={signIn} error={error} />;
  return <>{children}</>;
}
