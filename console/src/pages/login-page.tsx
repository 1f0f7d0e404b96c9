import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, asApiError, type ApiError } from '../api';
import type { Session } from '../session';
import { ErrorMessage } from '../components/states';

/** Username and password; the host answers with HttpOnly cookies the console never reads. */
function LoginForm({ onLoggedIn }: { onLoggedIn: (session: Session) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    const { data, error: failure, response } = await api.POST('/admin/auth/login', { body: { username, password } });
    setBusy(false);
    if (data) onLoggedIn(data);
    else setError(asApiError(failure, response.status));
  }

  return (
    <form onSubmit={(event) => void submit(event)} aria-label="Log in" className="login-form">
      <label>
        Username
        <input name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} />
      </label>
      <label>
        Password
        <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
      {error && <ErrorMessage error={error} action="log in" />}
      <button type="submit" disabled={busy}>
        {busy ? 'Logging in…' : 'Log in'}
      </button>
    </form>
  );
}

/** The page a visitor without a session sees. */
export function LoginPage({ onLoggedIn }: { onLoggedIn: (session: Session) => void }) {
  return (
    <main className="login">
      <h1>agent-host console</h1>
      <LoginForm onLoggedIn={onLoggedIn} />
    </main>
  );
}

/**
 * A session that could not be renewed: a modal login over the page the user was on, so the page and whatever was
 * typed on it are still there afterwards (a save that failed can simply be sent again).
 */
export function SessionEndedDialog({ onLoggedIn }: { onLoggedIn: (session: Session) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    element?.showModal();
    return () => element?.close();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="session-ended-heading" className="login" onCancel={(e) => e.preventDefault()}>
      <h2 id="session-ended-heading">Your session ended</h2>
      <p>Log in again to go on where you were; nothing on the page is lost.</p>
      <LoginForm onLoggedIn={onLoggedIn} />
    </dialog>
  );
}
