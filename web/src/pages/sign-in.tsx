import { useState } from 'preact/hooks';

/** Asks once for the API token; the server then keeps the session in an HttpOnly cookie. */
export function SignInPage({ onSubmit, error }: { onSubmit: (token: string) => void; error: string | null }) {
  const [token, setToken] = useState('');
  return (
    <main class="sign-in">
      <h1>nestbox</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit(token);
        }}
      >
        <label>
          API token
          <input type="password" name="token" autocomplete="current-password" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        </label>
        <button type="submit">Sign in</button>
        {error && <p class="error">{error}</p>}
      </form>
    </main>
  );
}
