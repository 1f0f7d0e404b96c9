import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import t from 'tap';
import { AdminClient, BOOTSTRAP_ADMIN, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

const CATALOG_SIZE = 25;

async function createSubAdmin(databaseUrl: string, username: string, password: string, grants: string[]): Promise<string> {
  const id = randomUUID();
  await query(databaseUrl, "INSERT INTO admin_users (id, username, password_hash, role_code, status) VALUES ($1, $2, $3, 'sub_admin', 'active')", [
    id,
    username,
    await hash(password),
  ]);
  for (const code of grants)
    await query(databaseUrl, 'INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, $3)', [randomUUID(), id, code]);
  return id;
}

t.test('login, session cookies, me, refresh, logout', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);

  t.test('login sets HttpOnly SameSite=Lax cookies and returns the session snapshot without tokens', async (t) => {
    const { status, body, headers } = await admin.login();
    t.equal(status, 200);
    t.equal(body.username, BOOTSTRAP_ADMIN.username);
    t.equal(body.role_code, 'super_admin');
    t.equal(body.permissions.length, CATALOG_SIZE, 'a super admin holds the whole catalog');
    const cookies = headers.getSetCookie();
    t.equal(cookies.length, 2);
    const access = cookies.find((c) => c.startsWith('agent_host_access='))!;
    const refresh = cookies.find((c) => c.startsWith('agent_host_refresh='))!;
    for (const cookie of [access, refresh]) {
      t.match(cookie, /; HttpOnly/, 'HttpOnly');
      t.match(cookie, /; SameSite=Lax/, 'SameSite=Lax');
      t.notMatch(cookie, /; Secure/, 'not Secure unless ADMIN_ACCESS_COOKIE_SECURE=true');
    }
    t.match(access, /; Path=\//);
    t.match(refresh, /; Path=\/admin\/auth/, 'the refresh cookie only goes to the auth endpoints');
    const text = JSON.stringify(body);
    for (const c of admin.cookies.values()) t.notMatch(text, c.value, 'no token appears in the response body');
  });

  t.test('/admin/auth/me returns the snapshot and effective permissions', async (t) => {
    const { status, body } = await admin.request('GET', '/admin/auth/me');
    t.equal(status, 200);
    t.equal(body.username, BOOTSTRAP_ADMIN.username);
    t.ok(body.permissions.includes('dashboard.read'));
  });

  t.test('refresh rotates the token; the old access and refresh tokens stop working at once', async (t) => {
    const oldAccess = admin.cookies.get('agent_host_access')!.value;
    const oldRefresh = admin.cookies.get('agent_host_refresh')!.value;
    const refreshed = await admin.request('POST', '/admin/auth/refresh');
    t.equal(refreshed.status, 200);
    t.not(admin.cookies.get('agent_host_refresh')!.value, oldRefresh, 'a new refresh token is issued');
    t.equal((await admin.request('GET', '/admin/auth/me')).status, 200, 'the new access token works');
    const stale = await admin.request('GET', '/admin/auth/me', undefined, { cookie: `agent_host_access=${oldAccess}` });
    t.equal(stale.status, 401, 'the old access token is refused');
    t.match(stale.body, { detail: 'administrator session expired or revoked; log in again', code: 'SESSION_EXPIRED', request_id: String });
    const reused = await fetch(host.url + '/admin/auth/refresh', { method: 'POST', headers: { cookie: `agent_host_refresh=${oldRefresh}` } });
    t.equal(reused.status, 401, 'the old refresh token is refused (single use)');
  });

  t.test('of concurrent duplicate refreshes exactly one succeeds', async (t) => {
    const token = admin.cookies.get('agent_host_refresh')!.value;
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () =>
        fetch(host.url + '/admin/auth/refresh', { method: 'POST', headers: { cookie: `agent_host_refresh=${token}` } }).then((r) => r.status),
      ),
    );
    t.equal(statuses.filter((s) => s === 200).length, 1, 'one refresh wins');
    t.equal(statuses.filter((s) => s === 401).length, 11, 'the others are refused');
  });

  t.test('logout revokes the session: access and refresh are refused afterwards', async (t) => {
    const client = new AdminClient(host.url);
    await client.login();
    const access = client.cookies.get('agent_host_access')!.value;
    const refresh = client.cookies.get('agent_host_refresh')!.value;
    const out = await client.request('POST', '/admin/auth/logout');
    t.equal(out.status, 200);
    t.equal(client.cookies.size, 0, 'cookies are cleared');
    t.equal((await fetch(host.url + '/admin/auth/me', { headers: { cookie: `agent_host_access=${access}` } })).status, 401);
    t.equal((await fetch(host.url + '/admin/auth/refresh', { method: 'POST', headers: { cookie: `agent_host_refresh=${refresh}` } })).status, 401);
  });

  t.test('a wrong password and an unknown user get the same answer', async (t) => {
    const wrong = await new AdminClient(host.url).login(BOOTSTRAP_ADMIN.username, 'nope');
    const unknown = await new AdminClient(host.url).login('nobody-here', 'nope');
    t.equal(wrong.status, 401);
    t.equal(unknown.status, 401);
    const { request_id: _first, ...wrongAnswer } = wrong.body;
    const { request_id: _second, ...unknownAnswer } = unknown.body;
    t.same(wrongAnswer, unknownAnswer, 'the error never says which of username or password was wrong');
    t.match(wrong.body, { detail: 'invalid username or password', code: 'INVALID_LOGIN', request_id: String });
  });

  t.test('no password or token is ever stored in an audit record', async (t) => {
    const rows = await query(host.databaseUrl, 'SELECT payload::text AS payload FROM admin_action_audits');
    t.ok(rows.length > 5);
    const secrets = [BOOTSTRAP_ADMIN.password, 'right-password', ...[...admin.cookies.values()].map((c) => c.value)];
    for (const row of rows) for (const secret of secrets) t.notOk(row.payload.includes(secret), 'a secret is absent from an audit payload');
  });
});

t.test('brute-force guard: failures lock the username on that address, and are audited', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST__ADMIN__LOGIN_MAX_FAILURES: '3' } });
  const victim = 'locked-user';
  await createSubAdmin(host.databaseUrl, victim, 'right-password', []);
  for (let i = 0; i < 3; i++) t.equal((await new AdminClient(host.url).login(victim, 'wrong')).status, 401, `failure ${i + 1} is a plain 401`);
  const locked = await new AdminClient(host.url).login(victim, 'right-password');
  t.equal(locked.status, 429, 'the right password is refused during the lockout');
  t.match(locked.body.detail, /too many failed logins; try again in \d+ s/);
  const otherUser = await new AdminClient(host.url).login(BOOTSTRAP_ADMIN.username, BOOTSTRAP_ADMIN.password);
  t.equal(otherUser.status, 200, 'another username from the same address is not locked by three failures (the address has 20 times as many)');
  const rows = await query(
    host.databaseUrl,
    "SELECT outcome, payload FROM admin_action_audits WHERE action = 'auth.login' AND payload->>'username' = $1 ORDER BY id",
    [victim],
  );
  t.same(
    rows.map((r) => r.outcome),
    ['failure', 'failure', 'failure', 'denied'],
    'each failure and the lockout are audited',
  );
  await query(host.databaseUrl, "UPDATE rate_limit_buckets SET expire = 1 WHERE key LIKE 'login-user-address:%'");
  t.equal((await new AdminClient(host.url).login(victim, 'right-password')).status, 200, 'after the lockout the right password works again');
});

t.test('permissions: 401 without login, 403 without the permission, both audited; grants take effect', async (t) => {
  const host = await startTestHost(t);
  const anonymous = await fetch(host.url + '/release-metadata');
  t.equal(anonymous.status, 401);
  const subId = await createSubAdmin(host.databaseUrl, 'viewer', 'viewer-password', ['agents.read']);
  const viewer = new AdminClient(host.url);
  const login = await viewer.login('viewer', 'viewer-password');
  t.same(login.body.permissions, ['agents.read'], 'a sub admin holds only its active grants');
  const denied = await viewer.request('GET', '/release-metadata');
  t.equal(denied.status, 403);
  t.match(denied.body, { detail: 'missing permission dashboard.read', code: 'PERMISSION_MISSING', request_id: String });
  await query(host.databaseUrl, "INSERT INTO admin_permission_grants (id, admin_user_id, permission_code) VALUES ($1, $2, 'dashboard.read')", [
    randomUUID(),
    subId,
  ]);
  t.equal((await viewer.request('GET', '/release-metadata')).status, 200, 'a new grant applies to the live session');
  await query(host.databaseUrl, "UPDATE admin_permission_grants SET status = 'revoked' WHERE admin_user_id = $1 AND permission_code = 'dashboard.read'", [
    subId,
  ]);
  t.equal((await viewer.request('GET', '/release-metadata')).status, 403, 'a revoked grant no longer counts');
  const rows = await query(host.databaseUrl, "SELECT actor_id, payload FROM admin_action_audits WHERE action = 'access.denied' ORDER BY id");
  t.same(
    rows.map((r) => [r.actor_id, r.payload.reason]),
    [
      [null, 'login_required'],
      [subId, 'missing_permission'],
      [subId, 'missing_permission'],
    ],
  );
  const catalog = await viewer.request('GET', '/admin/permission-catalog');
  t.equal(catalog.body.items.length, CATALOG_SIZE);
  for (const code of [
    'dashboard.read',
    'admin_permissions.write',
    'conversations.read',
    'conversations.write',
    'knowledge.read',
    'knowledge.write',
    'mcp.read',
    'mcp.write',
    'skills.read',
    'agents.read',
    'agents.write',
    'agents.delete',
    'scheduled_tasks.read',
    'scheduled_tasks.write',
    'evaluation.read',
    'evaluation.write',
    'jobs.read',
    'jobs.write',
    'document_recognition.write',
  ]) {
    t.ok(
      catalog.body.items.some((p: { code: string }) => p.code === code),
      `the catalog has ${code} (spec 5.3)`,
    );
  }
});

t.test('the first super admin: a generated one-time password, stored only as an argon2id hash', async (t) => {
  const host = await startTestHost(t, { env: { ADMIN_BOOTSTRAP_USERNAME: '', ADMIN_BOOTSTRAP_PASSWORD: '' } });
  const created = host.app.bootstrapAdmin!;
  t.equal(created.username, 'admin');
  t.ok(created.generatedPassword && created.generatedPassword.length >= 16, 'a strong password is generated');
  const [row] = await query(host.databaseUrl, "SELECT password_hash, is_protected FROM admin_users WHERE username = 'admin'");
  t.match(row!.password_hash, /^\$argon2id\$/);
  t.equal(row!.is_protected, true);
  t.equal((await new AdminClient(host.url).login('admin', created.generatedPassword!)).status, 200);
});

t.test('ADMIN_ACCESS_COOKIE_SECURE=true marks both cookies Secure', async (t) => {
  const host = await startTestHost(t, { env: { ADMIN_ACCESS_COOKIE_SECURE: 'true' } });
  const { headers } = await new AdminClient(host.url).login();
  t.ok(headers.getSetCookie().every((c) => /; Secure/.test(c)));
});

t.test('a malformed login body is a 422 listing each problem', async (t) => {
  const host = await startTestHost(t);
  const { status, body } = await new AdminClient(host.url).request('POST', '/admin/auth/login', { username: '', extra: 1 });
  t.equal(status, 422);
  t.same(
    body.detail.map((d: { loc: unknown[] }) => d.loc),
    [['body', 'username'], ['body', 'password'], ['body']],
    'each issue names where it is',
  );
  t.ok(
    body.detail.every((d: { msg: string; type: string }) => d.msg && d.type),
    'each issue has msg and type',
  );
});

t.test('currentPrincipal (for the WebSocket gateway) survives a refresh and follows logout, expiry and account changes', async (t) => {
  const host = await startTestHost(t);
  const auth = host.app.domains.adminAuth;
  const client = new AdminClient(host.url);
  await client.login();
  const principal = (await auth.authenticate(client.cookies.get('agent_host_access')!.value))!;
  t.match(await auth.currentPrincipal(principal), { session_id: principal.session_id, access_version: 1 }, 'a fresh session is live');
  t.equal((await client.request('POST', '/admin/auth/refresh')).status, 200);
  t.match(
    await auth.currentPrincipal(principal),
    { session_id: principal.session_id, access_version: 2 },
    'a refresh keeps the session live, at its new access version',
  );
  await query(host.databaseUrl, "UPDATE admin_users SET status = 'disabled' WHERE id = $1", [principal.admin_user_id]);
  t.equal(await auth.currentPrincipal(principal), undefined, 'a disabled account is not live');
  await query(host.databaseUrl, "UPDATE admin_users SET status = 'active' WHERE id = $1", [principal.admin_user_id]);
  t.equal(await auth.currentPrincipal({ ...principal, role_code: 'sub_admin' }), undefined, 'a role other than the one it was opened with is not live');
  await query(host.databaseUrl, "UPDATE admin_sessions SET refresh_expires_at = now() - interval '1 s' WHERE id = $1", [principal.session_id]);
  t.equal(await auth.currentPrincipal(principal), undefined, 'an expired session is not live');
  await query(host.databaseUrl, "UPDATE admin_sessions SET refresh_expires_at = now() + interval '1 day' WHERE id = $1", [principal.session_id]);
  t.ok(await auth.currentPrincipal(principal));
  await client.request('POST', '/admin/auth/logout');
  t.equal(await auth.currentPrincipal(principal), undefined, 'after logout the session is not live');
});
