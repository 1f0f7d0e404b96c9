import t from 'tap';
import { AdminClient, BOOTSTRAP_ADMIN, startTestHost } from '../helpers/host.js';
import { challengeHeader } from '../helpers/admins.js';
import { query } from '../helpers/services.js';

t.test('administrator users and every guard of spec 5.5', async (t) => {
  // Spec 5.5 lets a sub admin with admin_permissions.write manage grants: a host setting since issue 16.
  const host = await startTestHost(t, { env: { AGENT_HOST__ADMIN__SUB_ADMINS_MANAGE_PERMISSIONS: 'true' } });
  const root = new AdminClient(host.url);
  const rootId = (await root.login()).body.admin_user_id;
  const rootChallenge = () => challengeHeader(root, BOOTSTRAP_ADMIN.password);

  // A sub admin who manages users and permissions, created through the API.
  const manager = await root.request(
    'POST',
    '/admin/admin-users',
    {
      username: 'manager',
      password: 'manager-password-1',
      permission_codes: ['admin_users.read', 'admin_users.write', 'admin_permissions.write', 'dashboard.read', 'agents.read'],
    },
    await rootChallenge(),
  );
  t.equal(manager.status, 201, 'a super admin creates a sub_admin with initial grants through a challenge');
  t.same(
    manager.body.grants.map((g: { permission_code: string }) => g.permission_code),
    ['admin_permissions.write', 'admin_users.read', 'admin_users.write', 'agents.read', 'dashboard.read'],
  );
  const mgr = new AdminClient(host.url);
  await mgr.login('manager', 'manager-password-1');
  const mgrChallenge = () => challengeHeader(mgr, 'manager-password-1');

  t.test('creation: plain sub_admin needs no challenge; initial grants need admin_permissions.write and a challenge', async (t) => {
    const plain = await mgr.request('POST', '/admin/admin-users', { username: 'plain', password: 'plain-password-1' });
    t.equal(plain.status, 201);
    t.equal(plain.body.role_code, 'sub_admin');
    t.same(plain.body.effective_permissions, []);
    t.equal(
      (await mgr.request('POST', '/admin/admin-users', { username: 'PLAIN', password: 'plain-password-1' })).status,
      409,
      'usernames are unique, case-insensitively',
    );
    const noChallenge = await root.request('POST', '/admin/admin-users', { username: 'g1', password: 'g1-password-123', permission_codes: ['agents.read'] });
    t.equal(noChallenge.status, 403, 'initial grants without a challenge are refused');
    t.match(noChallenge.body.detail, /challenge required/);
    const unknown = await root.request(
      'POST',
      '/admin/admin-users',
      { username: 'g2', password: 'g2-password-123', permission_codes: ['root.everything'] },
      await rootChallenge(),
    );
    t.equal(unknown.status, 422, 'an unknown permission code is refused');
    t.equal((await mgr.request('POST', '/admin/admin-users', { username: 'short', password: 'short' })).status, 422, 'a short password is refused');
  });

  t.test('creation with grants by someone without admin_permissions.write is refused', async (t) => {
    const limited = await root.request(
      'POST',
      '/admin/admin-users',
      { username: 'limited', password: 'limited-password-1', permission_codes: ['admin_users.write'] },
      await rootChallenge(),
    );
    t.equal(limited.status, 201);
    const client = new AdminClient(host.url);
    await client.login('limited', 'limited-password-1');
    const refused = await client.request(
      'POST',
      '/admin/admin-users',
      { username: 'x1', password: 'x1-password-123', permission_codes: ['agents.read'] },
      await challengeHeader(client, 'limited-password-1'),
    );
    t.equal(refused.status, 403);
    t.match(refused.body, { detail: 'initial permissions need admin_permissions.write', code: 'PERMISSION_NOT_HELD', request_id: String });
  });

  t.test('role and status: only a super_admin, with a challenge, never on oneself', async (t) => {
    const target = (await mgr.request('POST', '/admin/admin-users', { username: 'target', password: 'target-password-1' })).body.admin_user_id;
    const bySub = await mgr.request('PATCH', `/admin/admin-users/${target}`, { status: 'disabled' }, await mgrChallenge());
    t.equal(bySub.status, 403);
    t.match(bySub.body, { detail: 'only a super_admin can change role_code or status', code: 'SUPER_ADMIN_REQUIRED', request_id: String });
    const noChallenge = await root.request('PATCH', `/admin/admin-users/${target}`, { status: 'disabled' });
    t.equal(noChallenge.status, 403);
    const ok = await root.request('PATCH', `/admin/admin-users/${target}`, { status: 'disabled' }, await rootChallenge());
    t.equal(ok.status, 200);
    t.equal(ok.body.status, 'disabled');
    const profile = await mgr.request('PATCH', `/admin/admin-users/${target}`, { display_name: 'Target Person' });
    t.equal(profile.status, 200, 'a profile change needs no challenge');
    t.equal(profile.body.display_name, 'Target Person');
    const self = await root.request('PATCH', `/admin/admin-users/${rootId}`, { role_code: 'sub_admin' }, await rootChallenge());
    t.equal(self.status, 403);
    t.match(self.body, { detail: 'you cannot change your own role_code or status', code: 'SELF_CHANGE_REFUSED', request_id: String });
  });

  t.test('a super_admin target needs a super_admin operator', async (t) => {
    const update = await mgr.request('PATCH', `/admin/admin-users/${rootId}`, { display_name: 'pwned' });
    t.equal(update.status, 403);
    t.match(update.body, { detail: 'only a super_admin can change, delete or reset a super_admin', code: 'SUPER_ADMIN_REQUIRED', request_id: String });
    t.equal(
      (await mgr.request('POST', `/admin/admin-users/${rootId}/password-reset`, { new_password: 'another-password-1' }, await mgrChallenge())).status,
      403,
    );
    t.equal((await mgr.request('DELETE', `/admin/admin-users/${rootId}`, undefined, await mgrChallenge())).status, 403);
  });

  t.test('no self-grant, even with admin_permissions.write; the refusal is audited', async (t) => {
    const managerId = manager.body.admin_user_id;
    const self = await mgr.request('POST', `/admin/admin-users/${managerId}/permissions`, { permission_codes: ['dashboard.read'] }, await mgrChallenge());
    t.equal(self.status, 403);
    t.match(self.body, { detail: 'you cannot grant permissions to yourself', code: 'SELF_CHANGE_REFUSED', request_id: String });
    const [row] = await query(
      host.databaseUrl,
      "SELECT outcome, payload FROM admin_action_audits WHERE action = 'admin_permission.grant' ORDER BY id DESC LIMIT 1",
    );
    t.same([row!.outcome, row!.payload.reason], ['failure', 'self_grant']);
    const other = (await mgr.request('POST', '/admin/admin-users', { username: 'grantee', password: 'grantee-password-1' })).body.admin_user_id;
    const granted = await mgr.request(
      'POST',
      `/admin/admin-users/${other}/permissions`,
      { permission_codes: ['dashboard.read', 'agents.read'] },
      await mgrChallenge(),
    );
    t.equal(granted.status, 200);
    t.same(granted.body.effective_permissions, ['agents.read', 'dashboard.read']);
    const grant = granted.body.grants.find((g: { permission_code: string }) => g.permission_code === 'dashboard.read');
    const noChallenge = await mgr.request('DELETE', `/admin/admin-users/${other}/permissions/${grant.grant_id}`);
    t.equal(noChallenge.status, 403, 'revoking needs a challenge');
    const revoked = await mgr.request('DELETE', `/admin/admin-users/${other}/permissions/${grant.grant_id}`, undefined, await mgrChallenge());
    t.equal(revoked.status, 200);
    t.same(revoked.body.effective_permissions, ['agents.read']);
  });

  t.test('password reset needs a challenge and revokes the target sessions', async (t) => {
    const id = (await mgr.request('POST', '/admin/admin-users', { username: 'resettee', password: 'resettee-password-1' })).body.admin_user_id;
    const victim = new AdminClient(host.url);
    await victim.login('resettee', 'resettee-password-1');
    t.equal((await victim.request('GET', '/admin/auth/me')).status, 200);
    t.equal(
      (await mgr.request('POST', `/admin/admin-users/${id}/password-reset`, { new_password: 'fresh-password-12' })).status,
      403,
      'no challenge, no reset',
    );
    const reset = await mgr.request('POST', `/admin/admin-users/${id}/password-reset`, { new_password: 'fresh-password-12' }, await mgrChallenge());
    t.equal(reset.status, 200);
    t.equal((await victim.request('GET', '/admin/auth/me')).status, 401, 'the old session is revoked at once');
    t.equal((await new AdminClient(host.url).login('resettee', 'resettee-password-1')).status, 401, 'the old password no longer works');
    t.equal((await new AdminClient(host.url).login('resettee', 'fresh-password-12')).status, 200, 'the new one does');
  });

  t.test('delete needs a challenge; a protected super admin only goes by break-glass with a reason', async (t) => {
    const id = (await mgr.request('POST', '/admin/admin-users', { username: 'leaver', password: 'leaver-password-1' })).body.admin_user_id;
    t.equal((await mgr.request('DELETE', `/admin/admin-users/${id}`)).status, 403, 'no challenge, no delete');
    t.equal((await mgr.request('DELETE', `/admin/admin-users/${id}`, undefined, await mgrChallenge())).status, 200);
    t.equal((await mgr.request('GET', `/admin/admin-users/${id}`)).status, 404);

    // A second super admin to operate on the protected bootstrap admin.
    const second = (await root.request('POST', '/admin/admin-users', { username: 'second-root', password: 'second-root-pass' })).body.admin_user_id;
    await root.request('PATCH', `/admin/admin-users/${second}`, { role_code: 'super_admin' }, await rootChallenge());
    const other = new AdminClient(host.url);
    await other.login('second-root', 'second-root-pass');
    const plainDelete = await other.request('DELETE', `/admin/admin-users/${rootId}`, undefined, await challengeHeader(other, 'second-root-pass'));
    t.equal(plainDelete.status, 409);
    t.match(plainDelete.body.detail, /protected; use break-glass-delete/);
    const noReason = await other.request('POST', `/admin/admin-users/${rootId}/break-glass-delete`, {}, await challengeHeader(other, 'second-root-pass'));
    t.equal(noReason.status, 422, 'a reason is required');
    const noChallenge = await other.request('POST', `/admin/admin-users/${rootId}/break-glass-delete`, { reason: 'the original owner left the company' });
    t.equal(noChallenge.status, 403, 'a challenge is required');
    const ok = await other.request(
      'POST',
      `/admin/admin-users/${rootId}/break-glass-delete`,
      { reason: 'the original owner left the company' },
      await challengeHeader(other, 'second-root-pass'),
    );
    t.equal(ok.status, 200);
    const [row] = await query(
      host.databaseUrl,
      "SELECT payload FROM admin_action_audits WHERE action = 'admin_user.break_glass_delete' AND outcome = 'success'",
    );
    t.equal(row!.payload.reason, 'the original owner left the company', 'the reason is audited');
  });

  t.test('list pages through administrators with a cursor', async (t) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: { username: string }[]; next_cursor: string | null; limit: number } } = await mgr.request(
        'GET',
        `/admin/admin-users?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      t.equal(page.status, 200);
      t.ok(page.body.items.length <= 2);
      seen.push(...page.body.items.map((u) => u.username));
      cursor = page.body.next_cursor;
    } while (cursor);
    const [{ count }] = (await query(host.databaseUrl, 'SELECT count(*)::int AS count FROM admin_users')) as [{ count: number }];
    t.equal(seen.length, count, 'every administrator is listed once');
    t.equal(new Set(seen).size, seen.length, 'no duplicates across pages');
    t.equal((await mgr.request('GET', '/admin/admin-users?limit=0')).status, 422);
  });
});
