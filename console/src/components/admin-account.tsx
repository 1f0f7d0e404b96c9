import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { useChallenge } from '../challenge';
import { useSession } from '../session';
import { ErrorMessage } from './states';

type AdminUser = components['schemas']['AdminUser'];

/**
 * One administrator's account, each change confirmed with the password: the display name; role and status (only a
 * super admin changes them, never their own); a new password, which ends the target's sessions; and deletion (a
 * protected super admin only by break-glass, with a reason).
 */
export function AdminAccount({ user }: { user: AdminUser }) {
  const me = useSession();
  const challenge = useChallenge();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const self = user.admin_user_id === me.admin_user_id;
  const superAdmin = me.role_code === 'super_admin';
  const [displayName, setDisplayName] = useState(user.display_name);
  const [role, setRole] = useState(user.role_code);
  const [status, setStatus] = useState(user.status);
  const [password, setPassword] = useState('');
  const [reason, setReason] = useState('');
  const path = { admin_user_id: user.admin_user_id };
  const refresh = () => queries.invalidateQueries({ queryKey: ['admin-user', user.admin_user_id] });

  const update = useMutation<unknown, ApiError>({
    mutationFn: async () =>
      expectData(
        api.PATCH('/admin/admin-users/{admin_user_id}', {
          params: { path, header: await challenge() },
          body: {
            ...(displayName !== user.display_name && { display_name: displayName }),
            ...(role !== user.role_code && { role_code: role }),
            ...(status !== user.status && { status }),
          },
        }),
      ),
    onSuccess: refresh,
  });
  const reset = useMutation<unknown, ApiError>({
    mutationFn: async () =>
      expectData(
        api.POST('/admin/admin-users/{admin_user_id}/password-reset', { params: { path, header: await challenge() }, body: { new_password: password } }),
      ),
    onSuccess: () => setPassword(''),
  });
  const remove = useMutation<unknown, ApiError>({
    mutationFn: async () => {
      const header = await challenge();
      const { response, error } = user.is_protected
        ? await api.POST('/admin/admin-users/{admin_user_id}/break-glass-delete', { params: { path, header }, body: { reason } })
        : await api.DELETE('/admin/admin-users/{admin_user_id}', { params: { path, header } });
      if (!response.ok) throw error as ApiError;
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['admin-users'] });
      await navigate('/admin-users');
    },
  });
  const submit = (mutation: { mutate: () => void }) => (event: FormEvent) => {
    event.preventDefault();
    mutation.mutate();
  };
  const changed = displayName !== user.display_name || role !== user.role_code || status !== user.status;

  return (
    <section aria-labelledby="account-heading">
      <h2 id="account-heading">Account</h2>
      <form className="form" onSubmit={submit(update)} aria-label="Profile">
        <label htmlFor="account-name">Display name</label>
        <input id="account-name" value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        {superAdmin && !self && (
          <>
            <label htmlFor="account-role">Role</label>
            <select id="account-role" value={role} onChange={(e) => setRole(e.target.value as AdminUser['role_code'])}>
              <option value="sub_admin">sub_admin</option>
              <option value="super_admin">super_admin</option>
            </select>
            <label htmlFor="account-status">Status</label>
            <select id="account-status" value={status} onChange={(e) => setStatus(e.target.value as AdminUser['status'])}>
              <option value="active">active</option>
              <option value="disabled">disabled</option>
            </select>
          </>
        )}
        {update.error && <ErrorMessage error={update.error} action="save the profile" />}
        {update.isSuccess && !changed && <p role="status">Saved.</p>}
        <button type="submit" disabled={!changed || update.isPending}>
          Save profile
        </button>
      </form>
      {!self && (
        <form className="form" onSubmit={submit(reset)} aria-label="Password reset">
          <label htmlFor="account-password">New password (at least 12 characters; their sessions end)</label>
          <input id="account-password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
          {reset.error && <ErrorMessage error={reset.error} action="set the password" />}
          {reset.isSuccess && <p role="status">Password set; their sessions have ended.</p>}
          <button type="submit" disabled={!password || reset.isPending}>
            Set password
          </button>
        </form>
      )}
      {!self && (
        <form className="form" onSubmit={submit(remove)} aria-label="Delete the administrator">
          {user.is_protected && (
            <>
              <label htmlFor="account-reason">A protected super admin: why delete them (at least 10 characters)</label>
              <textarea id="account-reason" value={reason} onChange={(e) => setReason(e.target.value)} />
            </>
          )}
          {remove.error && <ErrorMessage error={remove.error} action="delete the administrator" />}
          <button type="submit" className="secondary" disabled={remove.isPending || (user.is_protected && !reason.trim())}>
            Delete {user.username}
          </button>
        </form>
      )}
    </section>
  );
}
