import { useState } from 'preact/hooks';
import { api, ApiError } from '../api/client.ts';
import { setSession, type SessionAnswer } from '../api/session.ts';

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // The tokens come back as HttpOnly cookies, never in the answer (README: The web dashboard).
      setSession(await api<SessionAnswer>('POST', '/auth/login', { email, password, session: 'cookie' }));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The server could not be reached.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      <h1>Content Node Service</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <label>
          Email
          <input type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}
