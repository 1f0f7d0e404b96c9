// MCP servers, credentials, mounts, health check, test call, response preview
// and the call audits (spec 2.7, 4.13, 5.8), through the REST API of a host
// running the real tools-mcp plugin against the fixture servers over stdio and
// Streamable HTTP.
import t from 'tap';
import { rawStdio, trackingStdio } from '../fixtures/mcp/clients.js';
import { startMcpHttpFixture } from '../fixtures/mcp/http-server.js';
import { RAW_TOOL_PAGES } from '../fixtures/mcp/raw-tools.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

const SECRET = 'tok-admin-slice-Zq8Lw3Rn5Vx1';

t.test('MCP administration', async (t) => {
  // The HTTP fixture listens on loopback: URLs from the API reach it only because it is listed.
  const host = await startTestHost(t, { env: { AGENT_HOST_HTTP_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' } });
  const http = await startMcpHttpFixture();
  t.teardown(() => http.close());
  const admin = new AdminClient(host.url);
  await admin.login();
  const req = (method: string, path: string, body?: unknown) => admin.request(method, path, body);
  const locs = (body: { detail: { loc: unknown[] }[] }) => body.detail.map((d) => d.loc.join('.'));
  const responses: string[] = [];
  const keep = <T extends { body: unknown }>(r: T) => (responses.push(JSON.stringify(r.body)), r);

  const tracking = await req('POST', '/mcp-servers', { name: 'Tracking', transport_type: 'stdio', connection_config: trackingStdio() });
  const trackingId: string = tracking.body.mcp_server_id;
  const agent = (await req('POST', '/agents', { name: 'Desk', agent_type: 'chat' })).body;

  t.test('servers: transport_type comes from the tool backend registry, connection_config is checked by the backend', async (t) => {
    t.equal(tracking.status, 201, 'a stdio server is created');
    t.match(tracking.body, { name: 'Tracking', transport_type: 'stdio', status: 'active', credential_id: null }, 'it starts active');
    const unknown = await req('POST', '/mcp-servers', { name: 'X', transport_type: 'carrier_pigeon', connection_config: {} });
    t.equal(unknown.status, 422, 'an unregistered transport_type is refused');
    t.match(
      unknown.body.detail[0].msg,
      /unknown transport_type "carrier_pigeon"; registered: "stdio", "http_sse"/,
      'the message lists the registered transports',
    );
    const noCommand = await req('POST', '/mcp-servers', { name: 'X', transport_type: 'stdio', connection_config: {} });
    t.same([noCommand.status, locs(noCommand.body)], [422, ['body.connection_config.command']], 'stdio needs command');
    const badUrl = await req('POST', '/mcp-servers', { name: 'X', transport_type: 'http_sse', connection_config: { url: 'ftp://example.org' } });
    t.same([badUrl.status, locs(badUrl.body)], [422, ['body.connection_config.url']], 'http_sse needs an http(s) url');
    const duplicate = await req('POST', '/mcp-servers', { name: 'tracking', transport_type: 'stdio', connection_config: trackingStdio() });
    t.equal(duplicate.status, 409, 'names are unique, case-insensitively');
    const list = await req('GET', '/mcp-servers?limit=1');
    t.same([list.body.limit, list.body.items.length, list.body.next_cursor], [1, 1, null], 'the list envelope');
    const patched = await req('PATCH', `/mcp-servers/${trackingId}`, { description: 'tracking fixture' });
    t.equal(patched.body.description, 'tracking fixture', 'PATCH updates');
    const badPatch = await req('PATCH', `/mcp-servers/${trackingId}`, { connection_config: { args: [] } });
    t.equal(badPatch.status, 422, 'a PATCH of connection_config is checked too');
    const [audit] = await query(host.databaseUrl, "SELECT count(*)::int AS n FROM admin_action_audits WHERE action = 'mcp.server.create' AND target_id = $1", [
      trackingId,
    ]);
    t.equal(audit?.n, 1, 'the create is audited');
  });

  t.test('health-check: ok keeps the server active; a failure sets error, and a pass sets active again', async (t) => {
    const ok = await req('POST', `/mcp-servers/${trackingId}/health-check`);
    t.match(ok.body, { ok: true, status: 'active', message: /tracking-fixture .*stdio/ }, 'the fixture answers over stdio');
    const broken = await req('POST', '/mcp-servers', { name: 'Broken', transport_type: 'http_sse', connection_config: { url: `${http.url}/nowhere` } });
    const failed = await req('POST', `/mcp-servers/${broken.body.mcp_server_id}/health-check`);
    t.match(failed.body, { ok: false, status: 'error' }, 'a server that does not answer MCP is marked error');
    t.equal((await req('GET', `/mcp-servers/${broken.body.mcp_server_id}`)).body.status, 'error', 'the status is stored');
    await req('PATCH', `/mcp-servers/${broken.body.mcp_server_id}`, { connection_config: { url: `${http.url}/mcp` } });
    t.match((await req('POST', `/mcp-servers/${broken.body.mcp_server_id}/health-check`)).body, { ok: true, status: 'active' }, 'fixed, it is active again');
    await req('PATCH', `/mcp-servers/${broken.body.mcp_server_id}`, { status: 'inactive' });
    t.match(
      (await req('POST', `/mcp-servers/${broken.body.mcp_server_id}/health-check`)).body,
      { ok: true, status: 'inactive' },
      'an inactive server stays inactive',
    );
  });

  t.test('test-call: tools/list returns the tools and the raw answer; tools/call returns the outcome', async (t) => {
    const listed = await req('POST', `/mcp-servers/${trackingId}/test-call`, { action: 'tools/list' });
    t.equal(listed.body.status, 'success');
    const tool = listed.body.tools.find((x: { name: string }) => x.name === 'query_tracking');
    t.same(tool.input_schema.required, ['selectNo'], 'each tool comes with its input_schema');
    t.same(
      listed.body.raw_response.tools.map((x: { name: string }) => x.name),
      listed.body.tools.map((x: { name: string }) => x.name),
      'the raw answer holds the same tools',
    );
    const called = await req('POST', `/mcp-servers/${trackingId}/test-call`, {
      action: 'tools/call',
      tool_name: 'query_tracking',
      arguments: { selectNo: 'EGLV123456789' },
    });
    t.match(called.body, { status: 'success', result: { selectNo: 'EGLV123456789', response: { tracking: [] } } }, 'the tool result');
    const failing = await req('POST', `/mcp-servers/${trackingId}/test-call`, { action: 'tools/call', tool_name: 'fail' });
    t.match(failing.body, { status: 'error', error_message: 'tracking backend unavailable' }, 'a tool error is an error outcome');
    const slow = await req('POST', `/mcp-servers/${trackingId}/test-call`, {
      action: 'tools/call',
      tool_name: 'slow',
      arguments: { ms: 5000 },
      timeout_ms: 300,
    });
    t.match(slow.body, { status: 'timeout' }, 'timeout_ms overrides the default timeout');
    const noTool = await req('POST', `/mcp-servers/${trackingId}/test-call`, { action: 'tools/call' });
    t.same([noTool.status, locs(noTool.body)], [422, ['body.tool_name']], 'tools/call needs tool_name');
  });

  t.test("test-call: tools/list's raw_response is the server's own answer, its pages merged", async (t) => {
    const raw = await req('POST', '/mcp-servers', { name: 'Raw', transport_type: 'stdio', connection_config: rawStdio() });
    const listed = await req('POST', `/mcp-servers/${raw.body.mcp_server_id}/test-call`, { action: 'tools/list' });
    t.equal(listed.body.status, 'success');
    t.same(
      listed.body.raw_response,
      { tools: [...RAW_TOOL_PAGES[0]!.tools, ...RAW_TOOL_PAGES[1]!.tools] },
      'every tool as sent (title and vendor fields kept), both pages, no nextCursor',
    );
    t.same(
      listed.body.tools.at(-1),
      { name: 'lookup', description: 'Looks a code up.', input_schema: RAW_TOOL_PAGES[1]!.tools[0]!.inputSchema },
      'tools holds the mapped descriptors',
    );
    await req('DELETE', `/mcp-servers/${raw.body.mcp_server_id}`);
  });

  t.test('credentials: encrypted, never returned; scope governs reuse; placeholders reach the server; rotate', async (t) => {
    const created = keep(await req('POST', '/mcp-credentials', { name: 'Tracking API', secret_payload: { access_token: SECRET } }));
    t.equal(created.status, 201);
    t.match(created.body, { scope: 'shared', secret_keys: ['access_token'], has_secret: true }, 'metadata only');
    const credentialId: string = created.body.credential_id;
    const [row] = await query(host.databaseUrl, 'SELECT encrypted_secret_json FROM mcp_credentials WHERE id = $1', [credentialId]);
    t.match(row?.encrypted_secret_json, /^v2:[0-9a-f]{12}:/, 'stored as AES-256-GCM ciphertext naming its key');
    t.notMatch(row?.encrypted_secret_json, SECRET, 'not in clear');
    keep(await req('GET', `/mcp-credentials/${credentialId}`));
    keep(await req('GET', '/mcp-credentials'));
    const viaPatch = await req('PATCH', `/mcp-credentials/${credentialId}`, { secret_payload: { access_token: 'x' } });
    t.same([viaPatch.status, locs(viaPatch.body)], [422, ['body.secret_payload']], 'PATCH does not change the secret');
    t.equal(
      (await req('POST', '/mcp-credentials', { name: 'x', scope: 'server', secret_payload: { a: 'b' } })).status,
      422,
      'scope server needs mcp_server_id',
    );

    const server = keep(
      await req('POST', '/mcp-servers', {
        name: 'Tracking over HTTP',
        transport_type: 'http_sse',
        connection_config: { url: `${http.url}/mcp`, headers: { authorization: 'Bearer <ACCESS_TOKEN>' } },
        credential_id: credentialId,
      }),
    );
    const listed = keep(await req('POST', `/mcp-servers/${server.body.mcp_server_id}/test-call`, { action: 'tools/list' }));
    t.equal(listed.body.status, 'success', 'the server answers with the credential');
    t.ok(
      http.requests.some((r) => r.headers.authorization === `Bearer ${SECRET}`),
      '<ACCESS_TOKEN> in a header is replaced by the secret on the wire',
    );

    const echo = keep(
      await req('POST', '/mcp-servers', {
        name: 'Echoing',
        transport_type: 'http_sse',
        connection_config: { url: `${http.url}/reject`, headers: { authorization: 'Bearer <ACCESS_TOKEN>' } },
        credential_id: credentialId,
      }),
    );
    const rejected = keep(await req('POST', `/mcp-servers/${echo.body.mcp_server_id}/test-call`, { action: 'tools/list' }));
    t.equal(rejected.body.status, 'error', 'a server refusing the credential is an error');
    t.notMatch(JSON.stringify(rejected.body), SECRET, 'the secret the server echoed back is masked');
    keep(await req('POST', `/mcp-servers/${echo.body.mcp_server_id}/health-check`));

    const scoped = keep(
      await req('POST', '/mcp-credentials', { name: 'Only tracking', scope: 'server', mcp_server_id: trackingId, secret_payload: { access_token: SECRET } }),
    );
    t.equal(scoped.status, 201, 'a server-scoped credential');
    const foreign = await req('PATCH', `/mcp-servers/${server.body.mcp_server_id}`, { credential_id: scoped.body.credential_id });
    t.equal(foreign.status, 409, 'another server cannot use a server-scoped credential');
    const foreignTest = await req('POST', `/mcp-servers/${server.body.mcp_server_id}/test-call`, {
      action: 'tools/list',
      credential_id: scoped.body.credential_id,
    });
    t.equal(foreignTest.status, 409, 'nor in a test call');
    t.equal((await req('PATCH', `/mcp-servers/${trackingId}`, { credential_id: scoped.body.credential_id })).status, 200, 'its own server can');
    t.equal(
      (await req('PATCH', `/mcp-credentials/${credentialId}`, { scope: 'server', mcp_server_id: trackingId })).status,
      409,
      'a shared credential in use elsewhere cannot be narrowed',
    );

    const mount = await req('POST', `/agents/${agent.agent_id}/mcp-mounts`, { mcp_server_id: server.body.mcp_server_id });
    const rotated = keep(await req('POST', `/mcp-credentials/${credentialId}/rotate`, { secret_payload: { access_token: `${SECRET}-2` } }));
    t.equal(rotated.status, 200);
    t.ok(rotated.body.rotated_at, 'rotated_at is set');
    t.same(
      rotated.body.mounts_to_reverify,
      [{ mount_id: mount.body.mount_id, agent_id: agent.agent_id, mcp_server_id: server.body.mcp_server_id }],
      'the mounts to verify again are named',
    );
    keep(await req('POST', `/mcp-servers/${server.body.mcp_server_id}/test-call`, { action: 'tools/list' }));
    t.equal(http.requests.at(-1)?.headers.authorization, `Bearer ${SECRET}-2`, 'the rotated secret is used from the next call on');
    t.equal((await req('DELETE', `/mcp-credentials/${credentialId}`)).status, 409, 'a credential in use cannot be deleted');
    await req('DELETE', `/agents/${agent.agent_id}/mcp-mounts/${mount.body.mount_id}`);

    for (const text of responses) t.notMatch(text, SECRET, 'no response carries the secret');
    const audits = await query(host.databaseUrl, "SELECT payload::text AS p FROM admin_action_audits WHERE source = 'core.mcp'");
    t.ok(audits.length > 5, 'the changes are audited');
    t.notOk(
      audits.some((a) => a.p.includes(SECRET)),
      'no audit row carries the secret',
    );
  });

  t.test('mounts: policy fields, tool_capability trimmed and lower-cased, chat agents only', async (t) => {
    const created = await req('POST', `/agents/${agent.agent_id}/mcp-mounts`, {
      mcp_server_id: trackingId,
      tool_capability: '  Shipment Lookup ',
      allowed_tools: ['query_tracking9'],
    });
    t.equal(created.status, 201);
    t.match(
      created.body,
      {
        tool_capability: 'shipment lookup',
        allowed_tools: ['query_tracking9'],
        timeout_ms: 30000,
        max_calls_per_turn: 3,
        priority: 0,
        is_active: true,
        server_name: 'Tracking',
      },
      'defaults and normalisation',
    );
    t.equal((await req('POST', `/agents/${agent.agent_id}/mcp-mounts`, { mcp_server_id: trackingId })).status, 409, 'a server mounts once per agent');
    const etl = (await req('POST', '/agents', { name: 'ETL', agent_type: 'etl' })).body;
    t.equal((await req('POST', `/agents/${etl.agent_id}/mcp-mounts`, { mcp_server_id: trackingId })).status, 409, 'only chat agents mount tools');
    const patched = await req('PATCH', `/agents/${agent.agent_id}/mcp-mounts/${created.body.mount_id}`, {
      tool_capability: ' ',
      timeout_ms: 5000,
      priority: 7,
    });
    t.match(patched.body, { tool_capability: null, timeout_ms: 5000, priority: 7 }, 'PATCH updates the policy; blank clears the capability');
    t.equal((await req('GET', `/agents/${agent.agent_id}/mcp-mounts`)).body.items.length, 1);
    t.equal((await req('DELETE', `/mcp-servers/${trackingId}`)).status, 409, 'a mounted server cannot be deleted');
  });

  t.test('response preview: mounted and active only, allowlist obeyed, raw and business payloads with a field catalog', async (t) => {
    const other = await req('POST', '/mcp-servers', { name: 'Unmounted', transport_type: 'stdio', connection_config: trackingStdio() });
    const notMounted = await req('POST', `/agents/${agent.agent_id}/mcp-response-preview`, {
      mcp_server_id: other.body.mcp_server_id,
      tool_name: 'query_tracking',
    });
    t.equal(notMounted.status, 409, 'a server not mounted on the agent is refused');
    const blocked = await req('POST', `/agents/${agent.agent_id}/mcp-response-preview`, { mcp_server_id: trackingId, tool_name: 'whoami' });
    t.equal(blocked.status, 409, 'a tool outside allowed_tools is refused');
    const preview = await req('POST', `/agents/${agent.agent_id}/mcp-response-preview`, {
      mcp_server_id: trackingId,
      tool_name: 'query_tracking',
      arguments: { selectNo: 'MSCU1234567' },
    });
    t.equal(preview.status, 200);
    t.match(
      preview.body,
      {
        status: 'success',
        error_message: null,
        raw_response_payload: { tool: 'query_tracking', selectNo: 'MSCU1234567', response: { selectNo: 'MSCU1234567' } },
      },
      'the tracking tool is allowed through query_tracking9 in the allowlist',
    );
    t.notOk('response' in preview.body.business_response_payload, 'the business payload has the response wrapper removed');
    t.equal(preview.body.business_response_payload.selectNo, 'MSCU1234567', 'and selectNo read from the top level');
    const paths = preview.body.field_catalog.map((f: { path: string }) => f.path);
    t.ok(paths.includes('tracking.trackingSub.currentStatus'), 'the field catalog lists nested fields');
    const calls = await req('GET', `/agents/${agent.agent_id}/mcp-calls`);
    t.match(
      calls.body.items[0],
      { tool_name: 'query_tracking', status: 'success', origin: 'response_preview', request_payload: { selectNo: 'MSCU1234567' } },
      'the preview call is audited',
    );
    t.equal((await req('POST', `/agents/${agent.agent_id}/mcp-response-preview`, { mcp_server_id: trackingId })).status, 422, 'tool_name is required');
    const etl = (await req('POST', '/agents', { name: 'ETL preview', agent_type: 'etl' })).body;
    const notChat = await req('POST', `/agents/${etl.agent_id}/mcp-response-preview`, {
      mcp_server_id: trackingId,
      tool_name: 'query_tracking',
      arguments: { selectNo: 'MSCU1234567' },
    });
    t.equal(notChat.status, 409, 'only chat agents have a response preview');
    t.match(notChat.body.detail, /etl agent; MCP tools serve chat agents only/);
  });
});
