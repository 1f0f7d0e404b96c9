// Issue 16 items 5 and 6: an administrator boundary that holds, and browser-facing defaults. Each attack of the
// issue is a test here.
import t from 'tap';
import { loadConfig, DEFAULT_CONFIG_DIR } from '../../core/src/index.js';
import { everythingStdio } from '../fixtures/mcp/clients.js';
import { challengeHeader, createSubAdmin } from '../helpers/admins.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import { WsClient } from '../helpers/ws.js';

const passwordOf = (username: string) => `${username}-password-1`;

t.test('escalation by grant and by reset is refused', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST__ADMIN__SUB_ADMINS_MANAGE_PERMISSIONS: 'true' } });
  const root = new AdminClient(host.url);
  await root.login();
  const granter = await createSubAdmin(root, 'granter', ['admin_users.read', 'admin_users.write', 'admin_permissions.write', 'agents.read']);
  const strong = await createSubAdmin(root, 'strong', ['agents.read', 'mcp.write']);
  const weak = await createSubAdmin(root, 'weak', ['agents.read']);
  const asGranter = async (method: string, path: string, body?: unknown) =>
    granter.client.request(method, path, body, await challengeHeader(granter.client, passwordOf('granter')));

  const everything = await asGranter('POST', '/admin/admin-users', {
    username: 'puppet',
    password: 'puppet-password-1',
    permission_codes: ['agents.read', 'system_settings.write'],
  });
  t.equal(everything.status, 403, 'creating a user with a permission the granter lacks is refused');
  t.match(everything.body.detail, /you do not hold system_settings.write/);
  const fine = await asGranter('POST', '/admin/admin-users', { username: 'helper', password: 'helper-password-1', permission_codes: ['agents.read'] });
  t.equal(fine.status, 201, 'granting what it holds works');
  t.equal(
    (await asGranter('POST', `/admin/admin-users/${weak.id}/permissions`, { permission_codes: ['mcp.write'] })).status,
    403,
    'and so does a grant on an existing user',
  );

  const reset = await asGranter('POST', `/admin/admin-users/${strong.id}/password-reset`, { new_password: 'taken-over-password-1' });
  t.equal(reset.status, 403, 'resetting the password of an administrator holding more (mcp.write) is refused');
  t.match(reset.body.detail, /holds permissions you do not \(mcp.write\)/);
  t.equal((await new AdminClient(host.url).login('strong', passwordOf('strong'))).status, 200, 'whose password still works');
  t.equal((await asGranter('DELETE', `/admin/admin-users/${strong.id}`)).status, 403, 'deleting one is refused too');
  t.equal(
    (await asGranter('POST', `/admin/admin-users/${weak.id}/password-reset`, { new_password: 'a-new-weak-password-1' })).status,
    200,
    'a target with a subset of the permissions may be reset',
  );
  const audits = await query(host.databaseUrl, "SELECT payload->>'reason' AS reason FROM admin_action_audits WHERE outcome = 'failure' AND actor_id = $1", [
    granter.id,
  ]);
  t.ok(audits.some((a) => a.reason === 'grant_beyond_own_permissions') && audits.some((a) => a.reason === 'target_holds_more'), 'the refusals are audited');
});

t.test('by default only super admins manage permissions and stdio servers; mounts need agents.write and a public mount is audited', async (t) => {
  const host = await startTestHost(t);
  const root = new AdminClient(host.url);
  await root.login();
  const granter = await createSubAdmin(root, 'granter', ['admin_users.write', 'admin_permissions.write', 'agents.read']);
  const created = await granter.client.request(
    'POST',
    '/admin/admin-users',
    { username: 'x', password: 'x-password-1234', permission_codes: ['agents.read'] },
    await challengeHeader(granter.client, passwordOf('granter')),
  );
  t.equal(created.status, 403, 'a sub admin with admin_permissions.write still cannot grant');
  t.match(created.body.detail, /\[admin\] sub_admins_manage_permissions/);

  const tools = await createSubAdmin(root, 'tools', ['mcp.read', 'mcp.write', 'knowledge.read', 'knowledge.write']);
  const stdio = await tools.client.request('POST', '/mcp-servers', { name: 'Everything', transport_type: 'stdio', connection_config: everythingStdio() });
  t.equal(stdio.status, 403, 'a sub admin with mcp.write cannot define a stdio server');
  t.match(stdio.body.detail, /only super admins create or change stdio MCP servers/);

  const agent = (await root.request('POST', '/agents', { name: 'Public desk', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  const source = (await root.request('POST', '/knowledge-sources', { name: 'Board minutes' })).body;
  const narrow = await tools.client.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: source.source_id });
  t.equal(narrow.status, 403, 'knowledge.write alone cannot attach a source to an agent');
  t.match(narrow.body.detail, /agents.write/);
  t.equal((await root.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: source.source_id })).status, 201);
  const [audit] = await query(host.databaseUrl, "SELECT payload FROM admin_action_audits WHERE action = 'knowledge_mount.create'");
  t.match(audit?.payload, { exposed_publicly: true, agent_public_access_mode: 'public_anonymous' }, 'mounting onto a public agent is audited as such');
});

t.test('password guesses: reserved before they are checked, keyed on username and address, challenges included', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST_TRUSTED_PROXIES: 'loopback' } });
  const root = new AdminClient(host.url);
  await root.login();
  await createSubAdmin(root, 'victim', ['agents.read']);
  const from = (address: string) => ({ 'x-forwarded-for': address });
  const guesses = await Promise.all(
    Array.from({ length: 60 }, () =>
      new AdminClient(host.url).request('POST', '/admin/auth/login', { username: 'victim', password: 'wrong' }, from('198.51.100.7')),
    ),
  );
  const checked = guesses.filter((g) => g.status === 401).length;
  t.ok(checked <= 5, `60 parallel guesses: at most 5 passwords checked (${checked})`);
  t.equal(guesses.filter((g) => g.status === 429).length, 60 - checked, 'the rest refused before any check');
  const [{ n }] = (await query(host.databaseUrl, "SELECT count(*)::int AS n FROM admin_action_audits WHERE action = 'auth.login' AND outcome = 'failure'")) as [
    { n: number },
  ];
  t.equal(n, checked, 'and only those were verified');
  t.equal(
    (await new AdminClient(host.url).request('POST', '/admin/auth/login', { username: 'victim', password: passwordOf('victim') }, from('198.51.100.7'))).status,
    429,
    'the guessing address is locked out, even with the right password',
  );
  t.equal(
    (await new AdminClient(host.url).request('POST', '/admin/auth/login', { username: 'victim', password: passwordOf('victim') }, from('203.0.113.20'))).status,
    200,
    'the real user elsewhere is not',
  );

  const stolen = new AdminClient(host.url);
  await stolen.login('victim', passwordOf('victim'));
  const verify = async () => {
    const { body: challenge } = await stolen.request('POST', '/admin/auth/challenges');
    return stolen.request('POST', `/admin/auth/challenges/${challenge.challenge_id}/verify`, { nonce: challenge.nonce, password: 'guess' });
  };
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await verify()).status);
  t.same(statuses, [403, 403, 403, 403, 403, 429], 'a challenge verify is a guess counted with logins: five, then refused');
  t.equal((await stolen.request('GET', '/admin/auth/me')).status, 401, 'and the session that guessed is ended');
});

t.test('browser-facing defaults', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST_CORS_ORIGINS: 'https://console.example' } });
  const root = new AdminClient(host.url);
  await root.login();
  const cookie = root.cookieHeader('/');
  const post = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${host.url}${path}`, { method: 'POST', headers: { cookie, ...headers }, body });

  const form = await post('/knowledge-sources', 'name=planted', { 'content-type': 'application/x-www-form-urlencoded' });
  t.equal(form.status, 415, 'a form-encoded POST (what a plain HTML form sends) is refused');
  t.same(await query(host.databaseUrl, "SELECT id FROM knowledge_sources WHERE name = 'planted'"), [], 'and creates nothing');
  const foreign = await post('/agents', JSON.stringify({ name: 'planted', agent_type: 'chat' }), {
    'content-type': 'application/json',
    origin: 'https://evil.example',
  });
  t.equal(foreign.status, 403, 'a JSON POST from a foreign Origin with the cookie is refused');
  t.match(await foreign.json(), { detail: /https:\/\/evil.example may not use this host's administrator session/ });
  const crossSite = await post('/agents', JSON.stringify({ name: 'planted', agent_type: 'chat' }), {
    'content-type': 'application/json',
    'sec-fetch-site': 'cross-site',
  });
  t.equal(crossSite.status, 403, 'so is one marked cross-site by Sec-Fetch-Site');
  t.equal(
    (await post('/agents', JSON.stringify({ name: 'own', agent_type: 'chat' }), { 'content-type': 'application/json', origin: host.url })).status,
    201,
    "the host's own pages are served",
  );
  t.equal(
    (await post('/agents', JSON.stringify({ name: 'console', agent_type: 'chat' }), { 'content-type': 'application/json', origin: 'https://console.example' }))
      .status,
    201,
    'and so is a listed origin',
  );

  const session = (await root.request('POST', '/agents', { name: 'x', agent_type: 'chat' })).body;
  const socket = await WsClient.connect(host.url, `/ws/any-${session.agent_id}`, {
    cookie,
    query: { agent_id: session.agent_id },
    origin: 'https://evil.example',
  }).then(
    () => 'connected',
    (e: Error) => e.message,
  );
  t.not(socket, 'connected', 'a socket handshake with the cookie from a foreign page is refused');

  const health = await fetch(`${host.url}/healthz`);
  t.equal(health.headers.get('x-content-type-options'), 'nosniff');
  t.equal(health.headers.get('content-security-policy'), "frame-ancestors 'none'");
  t.equal(health.headers.get('referrer-policy'), 'no-referrer');
  t.equal(health.headers.get('server'), null, 'no Server banner');
  t.equal(health.headers.get('access-control-allow-origin'), null, 'no CORS for an unlisted caller');
  const listed = await fetch(`${host.url}/healthz`, { headers: { origin: 'https://console.example' } });
  t.equal(listed.headers.get('access-control-allow-origin'), 'https://console.example', 'CORS for a listed origin');
  const docs = await fetch(`${host.url}/docs`, { headers: { cookie } });
  t.match(
    docs.headers.get('content-security-policy'),
    /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'.*frame-ancestors 'none'/,
    '/docs has a CSP allowing its inline bootstrap by hash',
  );
});

t.test('the bootstrap password needs 12 characters', async (t) => {
  t.throws(
    () => loadConfig({ configDir: DEFAULT_CONFIG_DIR, env: { ADMIN_BOOTSTRAP_PASSWORD: 'short-pass' } }),
    /admin.bootstrap_password.*at least 12 characters/,
  );
  t.doesNotThrow(() => loadConfig({ configDir: DEFAULT_CONFIG_DIR, env: { ADMIN_BOOTSTRAP_PASSWORD: 'twelve-chars' } }));
});
