import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

t.test('agents: field rules of spec 2.4, versions, publish, public catalog', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_SYSTEM_PROMPT_MAX_LENGTH: '50', AGENT_JUDGE_PROMPT_MAX_LENGTH: '40' } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const create = (body: unknown) => admin.request('POST', '/agents', body);
  const locs = (body: { detail: { loc: unknown[] }[] }) => body.detail.map((d) => d.loc.join('.'));

  t.test('a chat agent gets core_chat_v1 and a derived judge_prompt_version', async (t) => {
    const { status, body } = await create({ name: 'Support', agent_type: 'chat', system_prompt: 'Be brief.' });
    t.equal(status, 201);
    t.equal(body.orchestrator_key, 'core_chat_v1', 'the default orchestrator is written on create');
    t.equal(body.judge_prompt_version, 'default', 'an empty judge prompt is the built-in default');
    t.equal(body.public_access_mode, 'admin_only');
    const judged = await admin.request('PATCH', `/agents/${body.agent_id}`, { judge_prompt: 'Score 1-5 for accuracy.' });
    t.match(judged.body.judge_prompt_version, /^sha256:[0-9a-f]{16}$/);
    const again = await admin.request('PATCH', `/agents/${body.agent_id}`, { judge_prompt: 'Score 1-5 for tone.' });
    t.not(again.body.judge_prompt_version, judged.body.judge_prompt_version, 'the version follows the stored text');
    const cleared = await admin.request('PATCH', `/agents/${body.agent_id}`, { orchestrator_key: null });
    t.equal(cleared.body.orchestrator_key, 'core_chat_v1', 'the default is written on update too');
  });

  t.test('non-chat agents refuse chat-only fields with 422', async (t) => {
    for (const [field, value] of [
      ['orchestrator_key', 'core_chat_v1'],
      ['human_takeover_enabled', true],
      ['hide_rag_source_filename', true],
      ['model_routing_config', { enabled: true }],
    ] as const) {
      const { status, body } = await create({ name: 'ETL', agent_type: 'etl', [field]: value });
      t.equal(status, 422, `${field} on an etl agent is refused`);
      t.same(locs(body), [`body.${field}`]);
    }
    const etl = await create({ name: 'ETL', agent_type: 'etl', human_takeover_enabled: false });
    t.equal(etl.status, 201, 'false and absent values are fine');
    t.equal(etl.body.orchestrator_key, null);
  });

  t.test('public_api_key only for fusion agents; unknown orchestrators refused; react_agent_v1 accepted', async (t) => {
    t.equal((await create({ name: 'x', agent_type: 'chat', public_access_mode: 'public_api_key' })).status, 422);
    t.equal((await create({ name: 'f', agent_type: 'fusion', public_access_mode: 'public_api_key' })).status, 201);
    const unknown = await create({ name: 'x', agent_type: 'chat', orchestrator_key: 'nope_v9' });
    t.equal(unknown.status, 422);
    t.match(unknown.body.detail[0].msg, /unknown orchestrator_key "nope_v9"; registered: core_chat_v1, react_agent_v1/);
    t.equal((await create({ name: 'r', agent_type: 'chat', orchestrator_key: 'react_agent_v1' })).status, 201);
  });

  t.test('system_prompt length follows config and the live system setting', async (t) => {
    const long = 'x'.repeat(60);
    const refused = await create({ name: 'long', agent_type: 'chat', system_prompt: long });
    t.equal(refused.status, 422);
    t.match(refused.body.detail[0].msg, /60 characters; the limit is 50/);
    await query(host.databaseUrl, "INSERT INTO system_settings (config_key, value) VALUES ('agent.system_prompt_max_length', '100')");
    t.equal((await create({ name: 'long', agent_type: 'chat', system_prompt: long })).status, 201, 'a raised setting applies without restart');
  });

  t.test('judge_prompt length follows its own limit', async (t) => {
    const refused = await create({ name: 'judged', agent_type: 'chat', judge_prompt: 'j'.repeat(41) });
    t.equal(refused.status, 422);
    t.same(locs(refused.body), ['body.judge_prompt']);
    t.match(refused.body.detail[0].msg, /41 characters; the limit is 40/);
    const { body } = await create({ name: 'judged', agent_type: 'chat', judge_prompt: 'j'.repeat(40) });
    t.equal((await admin.request('PATCH', `/agents/${body.agent_id}`, { judge_prompt: 'j'.repeat(45) })).status, 422, 'on update too');
  });

  t.test('usage limits are for chat agents only', async (t) => {
    for (const [field, value] of [
      ['max_total_requests', 5],
      ['max_concurrent_requests', 1],
      ['max_cost_usd_monthly', 2.5],
      ['max_tool_calls_total_per_request', 3],
    ] as const) {
      const { status, body } = await create({ name: 'fusion', agent_type: 'fusion', [field]: value });
      t.equal(status, 422, `${field} on a fusion agent is refused`);
      t.same(locs(body), [`body.${field}`]);
    }
    const { body: chat } = await create({ name: 'limited', agent_type: 'chat', max_total_requests: 5, max_cost_usd_daily: 1 });
    const changed = await admin.request('PATCH', `/agents/${chat.agent_id}`, { agent_type: 'etl' });
    t.same(
      [changed.status, changed.body.max_total_requests, changed.body.max_cost_usd_daily],
      [200, null, null],
      'a chat agent that changes type loses its limits',
    );
  });

  t.test('message_type_response_config follows 4.2 rule 4', async (t) => {
    const config = (other: unknown) => ({ name: 'fixed', agent_type: 'chat', message_type_response_config: { other } });
    const dup = await create(
      config({
        enabled: false,
        message_key_responses: [
          { message_key: 'Hours', response_text: 'a' },
          { message_key: '  hours ', response_text: 'b' },
        ],
      }),
    );
    t.equal(dup.status, 422, 'keys are unique after trim and case folding');
    t.same(locs(dup.body), ['body.message_type_response_config.other.message_key_responses.1.message_key']);
    const noText = await create(config({ enabled: true, response_text: '  ' }));
    t.equal(noText.status, 422, 'an enabled default needs text');
    const emptyKey = await create(config({ message_key_responses: [{ message_key: ' ', response_text: 'a' }] }));
    t.equal(emptyKey.status, 422, 'keys must be non-empty');
    const ok = await create(
      config({ enabled: true, response_text: 'We will get back to you.', message_key_responses: [{ message_key: 'hours', response_text: '9 to 5' }] }),
    );
    t.equal(ok.status, 201);
  });

  t.test('changing a chat agent to another type clears its chat-only fields', async (t) => {
    const { body } = await create({ name: 'switch', agent_type: 'chat', human_takeover_enabled: true });
    const changed = await admin.request('PATCH', `/agents/${body.agent_id}`, { agent_type: 'etl' });
    t.equal(changed.status, 200);
    t.same([changed.body.orchestrator_key, changed.body.human_takeover_enabled], [null, false]);
  });

  t.test('versions: manual snapshot, rollback saves the current configuration first, publish', async (t) => {
    const { body: agent } = await create({ name: 'v', agent_type: 'chat', system_prompt: 'first', model_routing_config: { enabled: true } });
    const v1 = await admin.request('POST', `/agents/${agent.agent_id}/versions`, { note: 'baseline' });
    t.equal(v1.status, 201);
    t.equal(v1.body.version_number, 1);
    for (const field of [
      'orchestrator_key',
      'model_routing_config',
      'message_type_response_config',
      'mcp_response_config',
      'response_grounding_config',
      'judge_prompt',
    ]) {
      t.ok(field in v1.body.snapshot, `the snapshot holds ${field}`);
    }
    await admin.request('PATCH', `/agents/${agent.agent_id}`, { system_prompt: 'second' });
    const rolled = await admin.request('POST', `/agents/${agent.agent_id}/versions/${v1.body.version_id}/rollback`);
    t.equal(rolled.status, 200);
    t.equal(rolled.body.system_prompt, 'first', 'the snapshot is restored');
    const versions = (await admin.request('GET', `/agents/${agent.agent_id}/versions`)).body.items;
    t.same(
      versions.map((v: { version_number: number; reason: string }) => [v.version_number, v.reason]),
      [
        [2, 'rollback_backup'],
        [1, 'manual'],
      ],
    );
    t.equal(versions[0].snapshot.system_prompt, 'second', 'the configuration before the rollback was kept');
    await query(host.databaseUrl, "UPDATE agent_versions SET snapshot = snapshot - 'orchestrator_key' WHERE id = $1", [v1.body.version_id]);
    await admin.request('PATCH', `/agents/${agent.agent_id}`, { orchestrator_key: 'react_agent_v1' });
    const legacy = await admin.request('POST', `/agents/${agent.agent_id}/versions/${v1.body.version_id}/rollback`);
    t.equal(legacy.body.orchestrator_key, 'core_chat_v1', 'rollback to a chat snapshot without orchestrator_key writes the default');
    const refused = await admin.request('POST', `/agents/${agent.agent_id}/publish`);
    t.equal(refused.status, 409, 'a chat agent is not published: nothing runs its snapshot');
    t.match(refused.body.detail, /a chat agent cannot be published: nothing runs a published chat snapshot/);
    const { body: fusion } = await create({
      name: 'f',
      agent_type: 'fusion',
      system_prompt: 'extract',
      fusion_definition: { input_slots: [{ name: 'text', kind: 'text' }], output_slots: [{ name: 'summary', kind: 'text' }] },
    });
    const published = await admin.request('POST', `/agents/${fusion.agent_id}/publish`);
    t.equal(published.status, 200);
    const [latest] = (await admin.request('GET', `/agents/${fusion.agent_id}/versions`)).body.items;
    t.same([published.body.published_agent_version_id, latest.reason], [latest.version_id, 'publish']);
  });

  t.test('rollback passes the checks of a PATCH: field rules and agent_type change checks', async (t) => {
    let running = false;
    host.app.domains.agents.addTypeChangeCheck(async (_id, from, to) =>
      running ? `a test job of this ${from} agent runs and cannot run on a ${to} agent` : undefined,
    );
    const { body: agent } = await create({ name: 'typed', agent_type: 'chat', system_prompt: 'p'.repeat(45) });
    const chatVersion = (await admin.request('POST', `/agents/${agent.agent_id}/versions`, {})).body;
    running = true;
    const patched = await admin.request('PATCH', `/agents/${agent.agent_id}`, { agent_type: 'etl' });
    t.equal(patched.status, 409, 'PATCH: the registered check refuses the type change');
    t.match(patched.body.detail, /agent_type cannot change from chat to etl: a test job of this chat agent runs/);
    running = false;
    t.equal((await admin.request('PATCH', `/agents/${agent.agent_id}`, { agent_type: 'etl' })).status, 200, 'once the job is done the change goes through');
    running = true;
    const rolled = await admin.request('POST', `/agents/${agent.agent_id}/versions/${chatVersion.version_id}/rollback`);
    t.equal(rolled.status, 409, 'rollback to a chat snapshot: the same check refuses it');
    t.match(rolled.body.detail, /agent_type cannot change from etl to chat/);
    running = false;
    t.equal((await admin.request('GET', `/agents/${agent.agent_id}`)).body.agent_type, 'etl', 'the refused rollback changed nothing');
    t.equal((await admin.request('GET', `/agents/${agent.agent_id}/versions`)).body.items.length, 1, 'and stored no backup snapshot');
    await query(
      host.databaseUrl,
      "INSERT INTO system_settings (config_key, value) VALUES ('agent.system_prompt_max_length', '40') ON CONFLICT (config_key) DO UPDATE SET value = EXCLUDED.value",
    );
    const tooLong = await admin.request('POST', `/agents/${agent.agent_id}/versions/${chatVersion.version_id}/rollback`);
    t.equal(tooLong.status, 422, 'a snapshot over the current system_prompt limit is refused like a PATCH');
    t.same(locs(tooLong.body), ['body.system_prompt']);
    await query(host.databaseUrl, "UPDATE system_settings SET value = '100' WHERE config_key = 'agent.system_prompt_max_length'");
    const restored = await admin.request('POST', `/agents/${agent.agent_id}/versions/${chatVersion.version_id}/rollback`);
    t.same(
      [restored.status, restored.body.agent_type, restored.body.orchestrator_key],
      [200, 'chat', 'core_chat_v1'],
      'with the job done and the limit raised the rollback goes through',
    );
  });

  t.test('/public/agents lists only active public_anonymous agents, without prompts', async (t) => {
    await create({ name: 'Public helper', agent_type: 'chat', public_access_mode: 'public_anonymous', system_prompt: 'secret sauce' });
    await create({ name: 'Retired', agent_type: 'chat', public_access_mode: 'public_anonymous', status: 'inactive' });
    const response = await fetch(host.url + '/public/agents');
    t.equal(response.status, 200, 'no login needed');
    const body = await response.json();
    t.same(
      body.items.map((a: { name: string }) => a.name),
      ['Public helper'],
    );
    t.same(Object.keys(body.items[0]).sort(), ['agent_id', 'agent_type', 'description', 'name']);
    t.notMatch(JSON.stringify(body), 'secret sauce');
  });

  t.test('writes are audited, delete removes the agent, and the API needs a login', async (t) => {
    const rows = await query(host.databaseUrl, "SELECT count(*)::int AS n FROM admin_action_audits WHERE action = 'agent.create' AND outcome = 'success'");
    t.ok(rows[0]!.n >= 8);
    const { body: agent } = await create({ name: 'doomed', agent_type: 'chat' });
    t.equal((await admin.request('DELETE', `/agents/${agent.agent_id}`)).status, 200);
    t.equal((await admin.request('GET', `/agents/${agent.agent_id}`)).status, 404);
    t.equal((await fetch(host.url + '/agents')).status, 401);
  });
});
