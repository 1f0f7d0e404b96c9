// Issue 16 item 1 (and the connection_config part of 8): stdio commands come from operators, not from the API, and
// credentials go only where they were confirmed to go. Each attack of the issue, by a sub-admin holding nothing but
// mcp.read and mcp.write.
import t from 'tap';
import { everythingStdio } from '../fixtures/mcp/clients.js';
import { startMcpHttpFixture } from '../fixtures/mcp/http-server.js';
import { createSubAdmin } from '../helpers/admins.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

const SIGNING_KEY = 'test-signing-key-with-enough-entropy-0123456789';

t.test('on the development default', async (t) => {
  // Sub admins may define stdio servers here, so the policy is what stops them (by default they cannot at all).
  const host = await startTestHost(t, { env: { AGENT_HOST__MCP__SUB_ADMINS_MANAGE_STDIO_SERVERS: 'true' } });
  const root = new AdminClient(host.url);
  await root.login();
  const { client: toolsAdmin } = await createSubAdmin(root, 'tools-admin', ['mcp.read', 'mcp.write']);
  const create = (connection_config: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    toolsAdmin.request('POST', '/mcp-servers', { name: `server ${Math.random()}`, transport_type: 'stdio', connection_config, ...extra });
  const environ = { command: 'sh', args: ['-c', 'cat /proc/$PPID/environ >&2; exit 1'] };

  t.test('a shell reading the host environment is refused at create and update, naming the policy', async (t) => {
    const created = await create(environ);
    t.equal(created.status, 422);
    t.match(created.body.detail[0], {
      loc: ['body', 'connection_config', 'command'],
      msg: /command "sh" is not allowed by the development default of stdio commands.*\[mcp\] stdio_allowed_commands/,
    });
    const server = (await create(everythingStdio())).body;
    const repointed = await toolsAdmin.request('PATCH', `/mcp-servers/${server.mcp_server_id}`, { connection_config: environ });
    t.equal(repointed.status, 422, 'nor can an allowed server be turned into one');
  });

  t.test('a stored shell command (written past the API) is refused at launch, and nothing of the environment comes back', async (t) => {
    const [row] = await query(
      host.databaseUrl,
      "INSERT INTO mcp_servers (id, name, description, transport_type, connection_config, status, created_at, updated_at) VALUES (gen_random_uuid(), 'smuggled', '', 'stdio', $1, 'active', now(), now()) RETURNING id",
      [JSON.stringify(environ)],
    );
    const answer = await toolsAdmin.request('POST', `/mcp-servers/${row!.id}/test-call`, { action: 'tools/call', tool_name: 'x' });
    t.match(JSON.stringify(answer.body), /not allowed by the development default/, 'the launch is refused by the policy');
    t.notMatch(JSON.stringify(answer.body), SIGNING_KEY, 'the token-signing key is not in the answer');
    t.notMatch(JSON.stringify(answer.body), 'DATABASE_URL');
  });

  t.test('loader and interpreter variables are refused even for an allowed command', async (t) => {
    for (const name of ['LD_PRELOAD', 'NODE_OPTIONS', 'BASH_ENV', 'PATH', 'PYTHONPATH']) {
      const refused = await create({ ...everythingStdio(), env: { [name]: '/tmp/x' } });
      t.match([refused.status, refused.body.detail?.[0]?.msg], [422, new RegExp(`${name} is never passed to a stdio server`)], `${name} refused`);
    }
  });

  t.test("a failing allowed child's stderr stays out of the answer", async (t) => {
    const failing = (await create({ command: process.execPath, args: ['-e', 'console.error("stderr-of-the-child " + process.env.HOME); process.exit(4)'] }))
      .body;
    const answer = await toolsAdmin.request('POST', `/mcp-servers/${failing.mcp_server_id}/test-call`, { action: 'tools/list' });
    t.match(JSON.stringify(answer.body), /exited with code 4/, 'the answer says how the child ended');
    t.notMatch(JSON.stringify(answer.body), 'stderr-of-the-child', 'not what it printed');
  });

  t.test('credentials: pasted ones refused, headers masked, and a repointed server needs its credential confirmed', async (t) => {
    const http = await startMcpHttpFixture();
    t.teardown(() => http.close());
    const pasted = await toolsAdmin.request('POST', '/mcp-servers', {
      name: 'Pasted',
      transport_type: 'http_sse',
      connection_config: { url: `${http.url}/mcp`, headers: { Authorization: 'Bearer sk-live-pasted-123' } },
    });
    t.equal(pasted.status, 422, 'a credential pasted into a header is refused');
    t.match(pasted.body.detail[0], { loc: ['body', 'connection_config', 'headers', 'Authorization'], msg: /put the value in an MCP credential/ });
    const credential = (await toolsAdmin.request('POST', '/mcp-credentials', { name: 'Tracking API', secret_payload: { ACCESS_TOKEN: 'tok-confirmed-9' } }))
      .body;
    const server = (
      await toolsAdmin.request('POST', '/mcp-servers', {
        name: 'Tracking',
        transport_type: 'http_sse',
        connection_config: { url: `${http.url}/mcp`, headers: { Authorization: 'Bearer <ACCESS_TOKEN>', 'X-Region': 'eu-west' } },
        credential_id: credential.credential_id,
      })
    ).body;
    t.same(
      server.connection_config.headers,
      { Authorization: 'Bearer <ACCESS_TOKEN>', 'X-Region': '********' },
      'only placeholders are shown; other values are masked',
    );
    const kept = await toolsAdmin.request('PATCH', `/mcp-servers/${server.mcp_server_id}`, {
      connection_config: { ...server.connection_config, headers: { ...server.connection_config.headers } },
    });
    t.equal(kept.status, 200, 'saving what was read back');
    const [stored] = await query(host.databaseUrl, 'SELECT connection_config FROM mcp_servers WHERE id = $1', [server.mcp_server_id]);
    t.equal(stored!.connection_config.headers['X-Region'], 'eu-west', 'keeps the masked value');

    const elsewhere = { ...server.connection_config, url: 'https://collector.example/mcp' };
    const repointed = await toolsAdmin.request('PATCH', `/mcp-servers/${server.mcp_server_id}`, { connection_config: elsewhere });
    t.equal(repointed.status, 409, 'repointing a server that holds a credential is refused');
    t.match(repointed.body.detail, /holds credential .*"confirm_credential": true/);
    const [unchanged] = await query(host.databaseUrl, 'SELECT connection_config FROM mcp_servers WHERE id = $1', [server.mcp_server_id]);
    t.equal(unchanged!.connection_config.url, `${http.url}/mcp`, 'and the destination is unchanged');
    const confirmed = await toolsAdmin.request('PATCH', `/mcp-servers/${server.mcp_server_id}`, { connection_config: elsewhere, confirm_credential: true });
    t.equal(confirmed.status, 200, 'with the credential confirmed it goes through');

    const bound = (
      await toolsAdmin.request('POST', '/mcp-credentials', {
        name: 'Bound',
        secret_payload: { ACCESS_TOKEN: 'tok-bound-3' },
        allowed_destinations: [`${http.url}/ignored-path`],
      })
    ).body;
    t.same(bound.allowed_destinations, [new URL(http.url).origin], 'a credential bound to a destination (kept as its origin)');
    const boundServer = await toolsAdmin.request('POST', '/mcp-servers', {
      name: 'Bound server',
      transport_type: 'http_sse',
      connection_config: { url: `${http.url}/mcp`, headers: { Authorization: 'Bearer <ACCESS_TOKEN>' } },
      credential_id: bound.credential_id,
    });
    t.equal(boundServer.status, 201, 'serves a server at that origin');
    const away = await toolsAdmin.request('PATCH', `/mcp-servers/${boundServer.body.mcp_server_id}`, {
      connection_config: { ...boundServer.body.connection_config, url: 'https://collector.example/mcp' },
      confirm_credential: true,
    });
    t.equal(away.status, 409, 'and cannot be repointed elsewhere, confirmed or not');
    t.match(away.body.detail, /may be sent only to http:\/\/127\.0\.0\.1:\d+, not to https:\/\/collector\.example/);
    await query(
      host.databaseUrl,
      "UPDATE mcp_servers SET connection_config = jsonb_set(connection_config, '{url}', '\"https://collector.example/mcp\"') WHERE id = $1",
      [boundServer.body.mcp_server_id],
    );
    const smuggled = await toolsAdmin.request('POST', `/mcp-servers/${boundServer.body.mcp_server_id}/test-call`, { action: 'tools/list' });
    t.match(JSON.stringify(smuggled.body), /may be sent only to/, 'a repoint written past the API gets no secret either');
  });
});

t.test('an operator allowlist: commands, fixed leading arguments and environment names', async (t) => {
  const { command, args } = everythingStdio();
  const policy = `[{ command = ${JSON.stringify(command)}, args_prefix = [${JSON.stringify(args[0])}], env = ["REGION"] }]`;
  const host = await startTestHost(t, { env: { AGENT_HOST__MCP__STDIO_ALLOWED_COMMANDS: policy } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const create = (connection_config: Record<string, unknown>) =>
    admin.request('POST', '/mcp-servers', { name: `server ${Math.random()}`, transport_type: 'stdio', connection_config });
  const everything = await create({ command, args, env: { REGION: 'eu' } });
  t.equal(everything.status, 201, 'the listed server with its arguments is allowed');
  const listed = await admin.request('POST', `/mcp-servers/${everything.body.mcp_server_id}/test-call`, { action: 'tools/list' });
  t.equal(listed.body.status, 'success', 'and runs');
  const otherScript = await create({ command, args: ['-e', 'process.exit(0)'] });
  t.match(
    otherScript.body.detail?.[0],
    { loc: ['body', 'connection_config', 'args'], msg: /allowed only with the arguments it is configured with/ },
    'the same executable with other arguments is refused',
  );
  const otherEnv = await create({ command, args, env: { TRACE: '1' } });
  t.match(otherEnv.body.detail?.[0]?.msg, /TRACE is not among the environment names/, 'an environment name the entry does not list is refused');
  const npx = await create({ command: 'npx', args: ['-y', 'anything'] });
  t.match(npx.body.detail?.[0]?.msg, /not allowed by \[mcp\] stdio_allowed_commands/, 'the development default no longer applies');
});
