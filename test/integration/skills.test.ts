// Skills (spec 2.8, 3.3, 4.12): assets, versions (drafts edited in place,
// released ones immutable), the 409s of spec 7, mounts with their policy, and
// skills running in core_chat_v1 through POST /stream against real MCP servers
// (the official everything server and the tracking fixture, both over stdio,
// through the tools-mcp and skills-mcp plugins), with their audits.
import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/argon2';
import t from 'tap';
import { ToolCallBudget } from '@agent-host/core';
import { everythingStdio, trackingStdio } from '../fixtures/mcp/clients.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import { tokensOf } from '../helpers/sse.js';

t.test('skills', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const req = (method: string, path: string, body?: unknown) => admin.request(method, path, body);
  const locs = (body: { detail: { loc: unknown[] }[] }) => body.detail.map((d) => d.loc.join('.'));

  const server = async (name: string, connection_config: Record<string, unknown>) =>
    (await req('POST', '/mcp-servers', { name, transport_type: 'stdio', connection_config })).body.mcp_server_id as string;
  const everything = await server('Everything', everythingStdio());
  const tracking = await server('Tracking', trackingStdio());
  const skill = async (name: string) => (await req('POST', '/skills', { name, description: `the ${name} skill` })).body.skill_id as string;
  const released = async (skillId: string, backendRef: string, config: Record<string, unknown>) =>
    (await req('POST', `/skills/${skillId}/versions`, { backend_type: 'mcp', backend_ref_id: backendRef, config, is_released: true })).body
      .version_id as string;
  const chatAgent = async (name: string, extra: Record<string, unknown> = {}) =>
    (await req('POST', '/agents', { name, agent_type: 'chat', public_access_mode: 'public_anonymous', system_prompt: 'You help customers.', ...extra })).body
      .agent_id as string;

  t.test('assets: create, unique names, list by status, detail, update', async (t) => {
    const created = await req('POST', '/skills', { name: 'weather', description: 'Looks up the weather' });
    t.equal(created.status, 201);
    t.match(created.body, { name: 'weather', description: 'Looks up the weather', status: 'active', version_count: 0, latest_released_version_id: null });
    t.equal((await req('POST', '/skills', { name: 'Weather' })).status, 409, 'names are unique whatever their letter case');
    const badName = await req('POST', '/skills', { name: 'the weather' });
    t.same([badName.status, locs(badName.body)], [422, ['body.name']], 'a name is a tool name: no spaces');
    const other = await req('POST', '/skills', { name: 'news', status: 'disabled' });
    t.same(
      (await req('GET', '/skills?status=disabled')).body.items.map((s: { name: string }) => s.name),
      ['news'],
      'the status filter',
    );
    const page = await req('GET', '/skills?limit=1');
    t.same([page.body.items[0].name, page.body.limit, typeof page.body.next_cursor], ['news', 1, 'string'], 'newest first, paged');
    t.equal((await req('GET', `/skills?limit=1&cursor=${page.body.next_cursor}`)).body.items[0].name, 'weather', 'the cursor pages on');
    const patched = await req('PATCH', `/skills/${other.body.skill_id}`, { status: 'active', description: 'Headlines' });
    t.match(patched.body, { status: 'active', description: 'Headlines', name: 'news' });
    t.equal((await req('GET', `/skills/${created.body.skill_id}`)).body.name, 'weather');
    t.equal((await req('GET', `/skills/${randomUUID()}`)).status, 404);
    const [audit] = await query(host.databaseUrl, "SELECT count(*)::int AS n FROM admin_action_audits WHERE action = 'skill.create' AND target_id = $1", [
      created.body.skill_id,
    ]);
    t.equal(audit!.n, 1, 'the create is audited');
  });

  t.test('versions: drafts edit in place, release makes them immutable, an mcp release needs an active server', async (t) => {
    const skillId = await skill('lookup');
    const draft = await req('POST', `/skills/${skillId}/versions`, { backend_type: 'mcp', backend_ref_id: everything, config: { tool_name: 'echo' } });
    t.equal(draft.status, 201);
    t.match(
      draft.body,
      { skill_id: skillId, version_number: 1, backend_type: 'mcp', is_released: false, released_at: null, config: { tool_name: 'echo' } },
      'a new version is a draft',
    );

    const unknownBackend = await req('POST', `/skills/${skillId}/versions`, { backend_type: 'carrier_pigeon', config: {} });
    t.same([unknownBackend.status, locs(unknownBackend.body)], [422, ['body.backend_type']], 'the backend type must be registered');
    t.match(unknownBackend.body.detail[0].msg, /registered: "mcp"/, 'the message lists the registered backends');
    const noTool = await req('POST', `/skills/${skillId}/versions`, { backend_type: 'mcp', backend_ref_id: everything, config: {} });
    t.same([noTool.status, locs(noTool.body)], [422, ['body.config.tool_name']], 'the backend checks the config');
    const noServer = await req('POST', `/skills/${skillId}/versions`, { backend_type: 'mcp', config: { tool_name: 'echo' } });
    t.same([noServer.status, locs(noServer.body)], [422, ['body.backend_ref_id']], 'an mcp version names its server');

    const edited = await req('PATCH', `/skills/${skillId}/versions/${draft.body.version_id}`, { config: { tool_name: 'echo', query_argument: 'message' } });
    t.match(
      edited.body,
      { version_id: draft.body.version_id, version_number: 1, config: { tool_name: 'echo', query_argument: 'message' } },
      'a draft is edited in place',
    );
    const badEdit = await req('PATCH', `/skills/${skillId}/versions/${draft.body.version_id}`, { config: { tool: 'echo' } });
    t.equal(badEdit.status, 422, 'an edit is checked like a create');

    const release = await req('POST', `/skills/${skillId}/versions/${draft.body.version_id}/release`);
    t.equal(release.status, 200);
    t.match(release.body, { is_released: true, released_at: String, released_by: String });
    const frozen = await req('PATCH', `/skills/${skillId}/versions/${draft.body.version_id}`, { config: { tool_name: 'add' } });
    t.equal(frozen.status, 409, 'a released version is immutable');
    t.match(frozen.body.detail, /released and immutable; create a new version/);
    t.equal((await req('POST', `/skills/${skillId}/versions/${draft.body.version_id}/release`)).status, 409, 'a version is released once');
    t.same(
      (await req('GET', `/skills/${skillId}/versions/${draft.body.version_id}`)).body.config,
      { tool_name: 'echo', query_argument: 'message' },
      'the released config is unchanged',
    );

    const inactive = await server('Retired', trackingStdio());
    await req('PATCH', `/mcp-servers/${inactive}`, { status: 'inactive' });
    const second = await req('POST', `/skills/${skillId}/versions`, { backend_type: 'mcp', backend_ref_id: inactive, config: { tool_name: 'query_tracking' } });
    t.equal(second.body.version_number, 2, 'versions are numbered per skill');
    const refused = await req('POST', `/skills/${skillId}/versions/${second.body.version_id}/release`);
    t.equal(refused.status, 409, 'release is refused while the mcp server is not active');
    t.match(refused.body.detail, new RegExp(`MCP server ${inactive} is inactive, not active`));
    const missing = await req('POST', `/skills/${skillId}/versions`, {
      backend_type: 'mcp',
      backend_ref_id: randomUUID(),
      config: { tool_name: 'echo' },
      is_released: true,
    });
    t.equal(missing.status, 409, 'creating a released version passes the same rule: a server that does not exist is not active');
    t.equal((await req('GET', `/skills/${skillId}/versions/${second.body.version_id}`)).body.is_released, false, 'the refused release left a draft');

    t.same(
      (await req('GET', `/skills/${skillId}/versions?released_only=true`)).body.items.map((v: { version_number: number }) => v.version_number),
      [1],
      'released_only',
    );
    t.same(
      (await req('GET', `/skills/${skillId}/versions`)).body.items.map((v: { version_number: number }) => v.version_number),
      [2, 1],
      'all versions, newest first',
    );
    t.equal((await req('GET', `/skills/${skillId}`)).body.latest_released_version_id, draft.body.version_id);
    const [audit] = await query(
      host.databaseUrl,
      "SELECT count(*)::int AS n FROM admin_action_audits WHERE action = 'skill_version.release' AND target_id = $1",
      [draft.body.version_id],
    );
    t.equal(audit!.n, 1, 'the release is audited');
  });

  t.test('mounts: only released versions of active skills on active servers, one mount per skill and agent', async (t) => {
    const agentId = await chatAgent('Mounts');
    const skillId = await skill('mountable');
    const versionId = await released(skillId, everything, { tool_name: 'echo', query_argument: 'message' });
    const draft = (await req('POST', `/skills/${skillId}/versions`, { backend_type: 'mcp', backend_ref_id: everything, config: { tool_name: 'echo' } })).body
      .version_id;

    const unreleased = await req('POST', `/agents/${agentId}/skill-mounts`, { skill_version_id: draft });
    t.equal(unreleased.status, 409, 'an unreleased version is not mounted');
    t.match(unreleased.body.detail, /is not released/);
    const mounted = await req('POST', `/agents/${agentId}/skill-mounts`, { skill_version_id: versionId, priority: 3 });
    t.equal(mounted.status, 201);
    t.match(
      mounted.body,
      {
        agent_id: agentId,
        skill_id: skillId,
        skill_name: 'mountable',
        skill_version_id: versionId,
        version_number: 1,
        is_active: true,
        priority: 3,
        timeout_ms: 30000,
        max_calls_per_turn: 3,
        tool_allowlist: [],
      },
      "the MCP mounts' defaults",
    );
    t.equal((await req('POST', `/agents/${agentId}/skill-mounts`, { skill_version_id: versionId })).status, 409, 'a skill is mounted once per agent');
    t.equal((await req('POST', `/agents/${randomUUID()}/skill-mounts`, { skill_version_id: versionId })).status, 404);
    t.equal((await req('POST', `/agents/${agentId}/skill-mounts`, { skill_version_id: randomUUID() })).status, 404);

    const patched = await req('PATCH', `/agents/${agentId}/skill-mounts/${mounted.body.mount_id}`, {
      timeout_ms: 2000,
      max_calls_per_turn: 1,
      tool_allowlist: ['echo', 'echo'],
      is_active: false,
    });
    t.match(
      patched.body,
      { timeout_ms: 2000, max_calls_per_turn: 1, tool_allowlist: ['echo'], is_active: false },
      'the policy changes; the allowlist is deduplicated',
    );
    t.equal(
      (await req('PATCH', `/agents/${agentId}/skill-mounts/${mounted.body.mount_id}`, { skill_version_id: draft })).status,
      409,
      'switching to an unreleased version is refused',
    );
    const foreign = await released(await skill('foreign'), everything, { tool_name: 'echo' });
    const wrongSkill = await req('PATCH', `/agents/${agentId}/skill-mounts/${mounted.body.mount_id}`, { skill_version_id: foreign });
    t.same([wrongSkill.status, locs(wrongSkill.body)], [422, ['body.skill_version_id']], 'a mount keeps its skill');
    t.equal((await req('PATCH', `/agents/${agentId}/skill-mounts/${mounted.body.mount_id}`, { timeout_ms: 10 })).status, 422, 'timeout_ms has a floor');

    const offServer = await server('Soon off', trackingStdio());
    const offVersion = await released(await skill('soon-off'), offServer, { tool_name: 'query_tracking' });
    await req('PATCH', `/mcp-servers/${offServer}`, { status: 'inactive' });
    const inactive = await req('POST', `/agents/${agentId}/skill-mounts`, { skill_version_id: offVersion });
    t.equal(inactive.status, 409, 'an mcp version is not mounted while its server is not active');
    t.match(inactive.body.detail, /cannot be mounted: its MCP server .* is inactive/);
    await req('PATCH', `/mcp-servers/${offServer}`, { status: 'active' });
    const offMount = (await req('POST', `/agents/${agentId}/skill-mounts`, { skill_version_id: offVersion, priority: 9 })).body;
    await req('PATCH', `/agents/${agentId}/skill-mounts/${offMount.mount_id}`, { is_active: false });
    await req('PATCH', `/mcp-servers/${offServer}`, { status: 'inactive' });
    t.equal(
      (await req('PATCH', `/agents/${agentId}/skill-mounts/${offMount.mount_id}`, { is_active: true })).status,
      409,
      'switching a mount on checks its server again',
    );

    t.same(
      (await req('GET', `/agents/${agentId}/skill-mounts`)).body.items.map((m: { skill_name: string }) => m.skill_name),
      ['soon-off', 'mountable'],
      'highest priority first',
    );
    const removed = await req('DELETE', `/agents/${agentId}/skill-mounts/${mounted.body.mount_id}`);
    t.same(removed.body, { status: 'deleted', mount_id: mounted.body.mount_id });
    t.equal((await req('DELETE', `/agents/${agentId}/skill-mounts/${mounted.body.mount_id}`)).status, 404);
    const [audit] = await query(host.databaseUrl, "SELECT count(*)::int AS n FROM admin_action_audits WHERE action LIKE 'skill_mount.%' AND target_id = $1", [
      agentId,
    ]);
    t.equal(audit!.n, 5, 'every mount change is audited, refusals are not');
  });

  t.test('POST /stream: skills run by priority before the final call; failures are audited and the reply goes on', async (t) => {
    const agentId = await chatAgent('Desk');
    const mount = async (name: string, serverId: string, config: Record<string, unknown>, policy: Record<string, unknown>) =>
      req('POST', `/agents/${agentId}/skill-mounts`, { skill_version_id: await released(await skill(name), serverId, config), ...policy });
    // Its own server: a call timing out while its server starts would fail a call sharing the connection being opened (a tools-mcp pool matter).
    const slowServer = await server('Tracking (slow)', trackingStdio());
    await mount('slow-lookup', slowServer, { tool_name: 'slow', arguments: { ms: 10_000 } }, { priority: 5, timeout_ms: 300 });
    await mount('echo-back', everything, { tool_name: 'echo', query_argument: 'message', arguments: { api_key: 'sk-live-Hx92' } }, { priority: 10 });
    await mount('broken-lookup', tracking, { tool_name: 'fail' }, { priority: 1 });
    await mount('guarded', everything, { tool_name: 'echo', query_argument: 'message' }, { priority: 0, tool_allowlist: ['get-sum'] });
    const idle = await mount('idle', everything, { tool_name: 'echo', query_argument: 'message' }, { priority: 20 });
    await req('PATCH', `/agents/${agentId}/skill-mounts/${idle.body.mount_id}`, { is_active: false });

    const { events } = await admin.stream({ thread_id: 'skills-1', agent_id: agentId, message: 'Where is parcel 42?' });
    t.match(events.at(-1), { type: 'done' }, 'done is last');
    t.notOk(
      events.some((e) => e.type === 'error'),
      'failing skills raise no error event',
    );
    t.equal(tokensOf(events), '[echo-back] Echo: Where is parcel 42?', "the echo skill's result reached the final model's prompt");

    const turns = await req('GET', '/sessions/skills-1/turns');
    const turn = turns.body.items[0];
    t.equal(turn.status, 'completed');
    const context = (await req('GET', `/sessions/skills-1/turns/${turn.turn_id}/context`)).body;
    t.same(
      context.skill_calls.map((c: { skill_name: string; status: string }) => [c.skill_name, c.status]),
      [
        ['echo-back', 'success'],
        ['slow-lookup', 'timeout'],
        ['broken-lookup', 'error'],
        ['guarded', 'blocked'],
      ],
      'active mounts ran highest priority first, each audited with its status; the inactive one did not run',
    );
    t.match(context.skill_calls[1].error_message, /timed out after \d+ ms/, 'core or the tool backend, whichever sees the deadline first, reports the timeout');
    t.match(context.skill_calls[2].error_message, /tracking backend unavailable/);
    t.match(context.skill_calls[3].error_message, /not in the mount's tool_allowlist/);
    t.same(
      context.skill_context.map((c: { skill_name: string; result: unknown }) => [c.skill_name, c.result]),
      [['echo-back', 'Echo: Where is parcel 42?']],
      'skill_context holds the results given to the model',
    );
    t.equal(context.context_payload.observation.skill_result_count, 1);
    const spans = context.context_payload.trace_spans.map((s: { name: string }) => s.name);
    t.ok(spans.indexOf('rag-retrieval') < spans.indexOf('skills'), 'skills run after retrieval');
    t.equal(spans.filter((n: string) => n === 'skill-call').length, 4, 'one span per call');

    const calls = await req('GET', '/sessions/skills-1/skill-calls');
    t.equal(calls.status, 200);
    t.same(
      calls.body.items.map((c: { skill_name: string }) => c.skill_name),
      ['guarded', 'broken-lookup', 'slow-lookup', 'echo-back'],
      'the session audit, newest first',
    );
    const echo = calls.body.items[3];
    t.match(echo, {
      trace_id: turn.trace_id,
      turn_id: turn.turn_id,
      agent_id: agentId,
      session_id: 'skills-1',
      tool_name: 'echo',
      backend_type: 'mcp',
      backend_ref_id: everything,
      version_number: 1,
    });
    t.same(
      echo.request_payload,
      { input: { query: 'Where is parcel 42?' }, tool_calls: [{ tool_name: 'echo', arguments: { api_key: '***', message: 'Where is parcel 42?' } }] },
      'sensitive keys are masked before storage',
    );
    const [raw] = await query(host.databaseUrl, 'SELECT count(*)::int AS n FROM skill_call_audits WHERE request_payload::text LIKE $1', ['%sk-live-Hx92%']);
    t.equal(raw!.n, 0, 'the masked value is stored nowhere');
    t.same(
      (await req('GET', '/sessions/skills-1/skill-calls?status=blocked')).body.items.map((c: { skill_name: string }) => c.skill_name),
      ['guarded'],
      'the status filter',
    );
    t.equal((await req('GET', `/agents/${agentId}/skill-calls?limit=2`)).body.items.length, 2, 'the agent audit pages');
    t.equal((await req('GET', '/sessions/nope/skill-calls')).status, 404);
    t.equal((await req('GET', '/sessions/skills-1/skill-calls?status=skipped')).status, 422, 'skills have no skipped status');
  });

  t.test('max_tool_calls_total_per_request blocks the skill executions past it', async (t) => {
    const agentId = await chatAgent('Budget', { max_tool_calls_total_per_request: 1 });
    for (const [name, priority] of [
      ['first-echo', 2],
      ['second-echo', 1],
    ] as const) {
      await req('POST', `/agents/${agentId}/skill-mounts`, {
        skill_version_id: await released(await skill(name), everything, { tool_name: 'echo', query_argument: 'message' }),
        priority,
      });
    }
    const { events } = await admin.stream({ thread_id: 'skills-2', agent_id: agentId, message: 'Echo the budget please' });
    t.match(events.at(-1), { type: 'done' });
    const calls = (await req('GET', '/sessions/skills-2/skill-calls')).body.items;
    t.same(
      calls.map((c: { skill_name: string; status: string }) => [c.skill_name, c.status]),
      [
        ['second-echo', 'blocked'],
        ['first-echo', 'success'],
      ],
    );
    t.match(calls[0].error_message, /max_tool_calls_total_per_request \(1\)/);
  });

  t.test('skills run before the MCP tool pipeline and share the tool budget with it', async (t) => {
    const agentId = await chatAgent('Order');
    await req('POST', `/agents/${agentId}/skill-mounts`, {
      skill_version_id: await released(await skill('first-things'), everything, { tool_name: 'echo', query_argument: 'message' }),
    });
    t.equal(
      (await req('POST', `/agents/${agentId}/mcp-mounts`, { mcp_server_id: tracking })).status,
      201,
      'the tracking server is mounted as an MCP tool server too',
    );
    const ask = async (thread: string) => {
      const { events } = await admin.stream({ thread_id: thread, agent_id: agentId, message: 'Where is container MSCU1234567?' });
      t.match(events.at(-1), { type: 'done' });
      const turn = (await req('GET', `/sessions/${thread}/turns`)).body.items[0];
      return (await req('GET', `/sessions/${thread}/turns/${turn.turn_id}/context`)).body;
    };
    const context = await ask('skills-order-1');
    const spans: string[] = context.context_payload.trace_spans.map((s: { name: string }) => s.name);
    const firstMcp = spans.findIndex((name) => name.startsWith('mcp-'));
    t.ok(firstMcp > spans.indexOf('skills') && spans.indexOf('skills') >= 0, `the skills span ends before the first MCP stage (${spans.join(', ')})`);
    t.same(
      context.skill_calls.map((c: { status: string }) => c.status),
      ['success'],
    );
    t.same(
      context.mcp_calls.map((c: { tool_name: string; status: string }) => [c.tool_name, c.status]),
      [['query_tracking', 'success']],
      'then the MCP pipeline called its tool',
    );
    t.ok(Date.parse(context.skill_calls[0].created_at) <= Date.parse(context.mcp_calls[0].created_at), 'the skill call is audited first');

    await req('PATCH', `/agents/${agentId}`, { max_tool_calls_total_per_request: 1 });
    const limited = await ask('skills-order-2');
    t.same(
      limited.skill_calls.map((c: { status: string }) => c.status),
      ['success'],
      'the skill takes the only execution',
    );
    t.same(
      limited.mcp_calls.map((c: { tool_name: string; status: string }) => [c.tool_name, c.status]),
      [['query_tracking', 'blocked']],
      'so the MCP call after it is blocked: one budget for both',
    );
  });

  t.test('the turn skill handle: max_calls_per_turn, unknown names, a disabled skill', async (t) => {
    const agentId = await chatAgent('Handle');
    const skillId = await skill('repeat');
    await req('POST', `/agents/${agentId}/skill-mounts`, {
      skill_version_id: await released(skillId, everything, { tool_name: 'echo', query_argument: 'message' }),
      max_calls_per_turn: 2,
    });
    const turn = () =>
      host.app.domains.skills.turnSkills({
        agentId,
        sessionId: 'handle-1',
        turnId: randomUUID(),
        traceId: 'trace-handle',
        budget: new ToolCallBudget(null),
        signal: new AbortController().signal,
        log: host.app.logger,
      });
    const skills = turn();
    t.same(await skills.handle.list(), [
      {
        name: 'repeat',
        description: 'the repeat skill',
        input_schema: { type: 'object', properties: { query: { type: 'string', description: 'What the user asked, in their words' } }, required: ['query'] },
      },
    ]);
    t.same(await skills.handle.call('repeat', { query: 'one' }), { status: 'success', result: 'Echo: one' });
    t.equal((await skills.handle.call('repeat', { query: 'two' })).status, 'success');
    t.same(
      await skills.handle.call('repeat', { query: 'three' }),
      { status: 'error', result: null, error: 'max_calls_per_turn (2) of this skill is reached in this turn' },
      'a call past max_calls_per_turn is refused',
    );
    t.same(
      skills.calls().map((c) => c.status),
      ['success', 'success', 'blocked'],
      '... and audited as blocked',
    );
    t.match(await skills.handle.call('nothing', {}), { status: 'error', error: /no active skill named "nothing"/ });
    await req('PATCH', `/skills/${skillId}`, { status: 'disabled' });
    t.same(await turn().handle.list(), [], "a disabled skill's mounts do not run");
  });

  t.test('permissions: skills.read, skills.write, and conversations.read for a session audit', async (t) => {
    const id = randomUUID();
    await query(
      host.databaseUrl,
      "INSERT INTO admin_users (id, username, password_hash, role_code, status) VALUES ($1, 'no-skills', $2, 'sub_admin', 'active')",
      [id, await hash('no-skills-password')],
    );
    const other = new AdminClient(host.url);
    await other.login('no-skills', 'no-skills-password');
    t.equal((await other.request('GET', '/skills')).status, 403);
    t.equal((await other.request('POST', '/skills', { name: 'x' })).status, 403);
    t.equal((await other.request('GET', '/sessions/skills-1/skill-calls')).status, 403);
  });
});
