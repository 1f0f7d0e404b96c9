import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import { api, expectData, type ApiError } from '../api';
import { useChallenge } from '../challenge';
import { AdminAccount } from '../components/admin-account';
import { PermissionChecks } from '../components/permission-checks';
import { ErrorMessage, Loading } from '../components/states';
import { useCan, useSession } from '../session';

/** One administrator: account, grants (revocable) and new grants, each change confirmed with a challenge. */
export function AdminUserPage() {
  const adminUserId = useParams().adminUserId!;
  const me = useSession();
  const mayGrant = useCan('admin_permissions.write') && adminUserId !== me.admin_user_id;
  const mayWrite = useCan('admin_users.write');
  const challenge = useChallenge();
  const queries = useQueryClient();
  const [chosen, setChosen] = useState<string[]>([]);
  const path = { admin_user_id: adminUserId };
  const user = useQuery({
    queryKey: ['admin-user', adminUserId],
    queryFn: () => expectData(api.GET('/admin/admin-users/{admin_user_id}', { params: { path } })),
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['admin-user', adminUserId] });
  const grant = useMutation<unknown, ApiError, string[]>({
    mutationFn: async (permission_codes) =>
      expectData(api.POST('/admin/admin-users/{admin_user_id}/permissions', { params: { path, header: await challenge() }, body: { permission_codes } })),
    onSuccess: async () => {
      setChosen([]);
      await refresh();
    },
  });
  const revoke = useMutation<unknown, ApiError, string>({
    mutationFn: async (grantId) =>
      expectData(
        api.DELETE('/admin/admin-users/{admin_user_id}/permissions/{grant_id}', {
          params: { path: { ...path, grant_id: grantId }, header: await challenge() },
        }),
      ),
    onSuccess: refresh,
  });

  if (user.isPending) return <Loading what="the administrator" />;
  if (user.isError) return <ErrorMessage error={user.error} action="read the administrator" />;
  const { data } = user;
  const granted = data.grants.map((g) => g.permission_code);
  return (
    <>
      <h1>{data.username}</h1>
      <p className="muted">
        {data.display_name} · {data.role_code} · {data.status}
      </p>
      {mayWrite && <AdminAccount key={data.updated_at} user={data} />}
      <h2>Grants</h2>
      {data.role_code === 'super_admin' && <p>A super admin holds every permission.</p>}
      {data.grants.length === 0 && data.role_code !== 'super_admin' && <p className="muted">No permission granted yet.</p>}
      {data.grants.length > 0 && (
        <table className="compact">
          <thead>
            <tr>
              <th scope="col">Permission</th>
              <th scope="col">Granted</th>
              {mayGrant && <th scope="col">Revoke</th>}
            </tr>
          </thead>
          <tbody>
            {data.grants.map((g) => (
              <tr key={g.grant_id}>
                <td>{g.permission_code}</td>
                <td>{g.created_at ? new Date(g.created_at).toLocaleString() : '—'}</td>
                {mayGrant && (
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => revoke.mutate(g.grant_id)}
                      disabled={revoke.isPending}
                      aria-label={`Revoke ${g.permission_code}`}
                    >
                      Revoke
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {revoke.error && <ErrorMessage error={revoke.error} action="revoke the permission" />}
      {mayGrant && data.role_code !== 'super_admin' && (
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault();
            if (chosen.length > 0) grant.mutate(chosen);
          }}
        >
          <PermissionChecks legend="Grant more" chosen={chosen} onChange={setChosen} hidden={granted} />
          {grant.error && <ErrorMessage error={grant.error} action="grant the permissions" />}
          <button type="submit" disabled={grant.isPending || chosen.length === 0}>
            Grant
          </button>
        </form>
      )}
    </>
  );
}
