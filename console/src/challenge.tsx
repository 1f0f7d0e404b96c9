import { createContext, useCallback, useContext, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { api, asApiError, expectData, type ApiError } from './api';
import { ErrorMessage } from './components/states';

/** What a sensitive call is sent with: the single-use token of a verified challenge. */
export type ChallengeHeader = { 'x-admin-challenge-token': string };

const CANCELLED: ApiError = { code: 'CHALLENGE_CANCELLED', message: 'the password was not confirmed', detail: null, request_id: '' };

const ChallengeContext = createContext<() => Promise<ChallengeHeader>>(() => Promise.reject(CANCELLED));

/** Re-enter the password: a new challenge each try, since a wrong password burns the one it was for. */
function ChallengeDialog({ onConfirmed, onCancel }: { onConfirmed: (header: ChallengeHeader) => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const element = dialog.current;
    element?.showModal();
    return () => element?.close();
  }, []);

  async function confirm(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      const challenge = await expectData(api.POST('/admin/auth/challenges'));
      const verified = await expectData(
        api.POST('/admin/auth/challenges/{challenge_id}/verify', {
          params: { path: { challenge_id: challenge.challenge_id } },
          body: { nonce: challenge.nonce, password },
        }),
      );
      onConfirmed({ 'x-admin-challenge-token': verified.challenge_token });
    } catch (failure) {
      setError(asApiError(failure, 0));
      setPassword('');
    } finally {
      setBusy(false);
    }
  }

  return (
    <dialog
      ref={dialog}
      aria-labelledby="challenge-heading"
      className="login"
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id="challenge-heading">Confirm with your password</h2>
      <p>This change needs your password again.</p>
      <form onSubmit={(e) => void confirm(e)} className="login-form">
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {error && <ErrorMessage error={error} action="confirm" />}
        <div className="toolbar">
          <button type="submit" disabled={busy}>
            Confirm
          </button>
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** Puts the challenge dialog at the disposal of every page below it. */
export function ChallengeProvider({ children }: { children: ReactNode }) {
  const [pending, setPending] = useState<{ resolve: (header: ChallengeHeader) => void; reject: (error: ApiError) => void }>();
  const ask = useCallback(() => new Promise<ChallengeHeader>((resolve, reject) => setPending({ resolve, reject })), []);
  return (
    <ChallengeContext value={ask}>
      {children}
      {pending && (
        <ChallengeDialog
          onConfirmed={(header) => {
            pending.resolve(header);
            setPending(undefined);
          }}
          onCancel={() => {
            pending.reject(CANCELLED);
            setPending(undefined);
          }}
        />
      )}
    </ChallengeContext>
  );
}

/**
 * For the operations whose `x-admin-challenge-token` header the API document marks required: asks for the password,
 * then resolves with the header to send. Rejects (CHALLENGE_CANCELLED) when the user cancels.
 */
export function useChallenge(): () => Promise<ChallengeHeader> {
  return useContext(ChallengeContext);
}
