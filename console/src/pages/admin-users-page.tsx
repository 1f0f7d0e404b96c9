import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, expectData, type ApiError } from '../api';
import { useChallenge } from '../challenge';
import { PermissionChecks } from '../components/permission-checks';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

interface Draft {
  username: string;
  display_name: string;
  password: string;
  permission_codes: string[];
}

const EMPTY: Draft = { username: '', display_name: '', password: '', permission_codes: [] };

/** A new sub-administrator: the host asks for the creator's password again (a challenge) before it is made. */
function NewAdministrator() {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const mayGrant = useCan('admin_permissions.write');
  const challenge = useChallenge();
  const queries = useQueryClient();
  const create = useMutation<unknown, ApiError, Omit<Draft, 'display_name'> & { display_name?: string }>({
    mutationFn: async (body) => expectData(api.POST('/admin/admin-users', { params: { header: await challenge() }, body })),
    onSuccess: async () => {
      setDraft(EMPTY);
      await queries.invalidateQueries({ queryKey: ['admin-users'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { display_name, ...rest } = draft;
    create.mutate({ ...rest, ...(display_name && { display_name }) });
  };
  return (
    <form onSubmit={submit} className="form" aria-label="New administrator">
      <h2>New administrator</h2>
      <label htmlFor="admin-username">Username</label>
      <input id="admin-username" required value={draft.username} onChange={(e) => setDraft({ ...draft, username: e.target.value })} />
      <label htmlFor="admin-display-name">Display name</label>
      <input id="admin-display-name" value={draft.display_name} onChange={(e) => setDraft({ ...draft, display_name: e.target.value })} />
      <label htmlFor="admin-password">Password (at least 12 characters)</label>
      <input
        id="admin-password"
        type="password"
        autoComplete="new-password"
        required
        value={draft.password}
        onChange={(e) => setDraft({ ...draft, password: e.target.value })}
      />
      {mayGrant && (
        <PermissionChecks legend="Permissions" chosen={draft.permission_codes} onChange={(permission_codes) => setDraft({ ...draft, permission_codes })} />
      )}
      {create.error && <ErrorMessage error={create.error} action="create the administrator" />}
      <button type="submit" disabled={create.isPending}>
        Create administrator
      </button>
    </form>
  );
}

/** Every administrator by username, and (with admin_users.write) a form for a new one. */
export function AdminUsersPage() {
  const mayCreate = useCan('admin_users.write');
  const users = useInfiniteQuery({
    queryKey: ['admin-users'],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => expectData(api.GET('/admin/admin-users', { params: { query: { limit: 50, ...(pageParam && { cursor: pageParam }) } } })),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const items = users.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Administrators</h1>
      {users.isPending && <Loading what="administrators" />}
      {users.isError && <ErrorMessage error={users.error} action="list the administrators" />}
      {users.isSuccess && items.length === 0 && <Empty>No administrators.</Empty>}
      {items.length > 0 && (
        <DataTable
          rows={items}
          rowKey={(user) => user.admin_user_id}
          columns={[
            { header: 'Username', cell: (user) => <Link to={`/admin-users/${user.admin_user_id}`}>{user.username}</Link> },
            { header: 'Name', cell: (user) => user.display_name },
            { header: 'Role', cell: (user) => user.role_code },
            { header: 'Status', cell: (user) => user.status },
            { header: 'Permissions', cell: (user) => user.effective_permissions.length },
            { header: 'Last login', cell: (user) => <When at={user.last_login_at} /> },
          ]}
        />
      )}
      <ShowMore list={users} what="administrators" />
      {mayCreate && <NewAdministrator />}
    </>
  );
}
