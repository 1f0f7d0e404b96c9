// mcp_response_config of spec 4.13 through POST /stream: direct-response
// rules (raw_json, json_subset, text, wrapping, fallback), the legacy raw
// passthrough, quick-match commands and intent gate rules, against the
// tracking fixture over stdio (also as a carrier offering query_tracking9)
// and the everything server.
import t from 'tap';
import { everythingStdio, trackingStdio } from '../fixtures/mcp/clients.js';
import { spanOf, startToolHost } from '../helpers/mcp.js';

const CONTAINER = 'MSCU1234567';
const AGENT = { agent_type: 'chat', model_provider: 'openai', model_name: 'fixture-model', public_access_mode: 'public_anonymous' };
const fenced = (text: string) => /^```json\n[\s\S]*\n```$/.test(text);

t.test('response rules, raw passthrough, quick match and intent gates', async (t) => {
  const h = await startToolHost(t, {
    mcpToml: '[mcp]\nraw_passthrough_tool_keys = ["query_tracking9"]',
    env: { MCP_RAW_PASSTHROUGH_WRAP_JSON_CODE_BLOCK: 'true' },
  });
  const { admin } = h;
  const tracking = (await admin.request('POST', '/mcp-servers', { name: 'Tracking', transport_type: 'stdio', connection_config: trackingStdio() })).body
    .mcp_server_id as string;
  const everything = (await admin.request('POST', '/mcp-servers', { name: 'Everything', transport_type: 'stdio', connection_config: everythingStdio() })).body
    .mcp_server_id as string;
  // A carrier whose tracking tool is query_tracking9, answering raw fields the projection must drop.
  const carrier = (await admin.request('POST', '/mcp-servers', { name: 'Carrier', transport_type: 'stdio', connection_config: trackingStdio('--tracking9') }))
    .body.mcp_server_id as string;
  let n = 0;
  const agentWith = async (
    mcp_response_config: Record<string, unknown> | null,
    mounts: Record<string, unknown>[] = [{ mcp_server_id: tracking }],
    extra: Record<string, unknown> = {},
  ) => {
    const created = await admin.request('POST', '/agents', { name: `agent ${++n}`, ...AGENT, mcp_response_config, ...extra });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    for (const mount of mounts) await admin.request('POST', `/agents/${created.body.agent_id}/mcp-mounts`, mount);
    return created.body.agent_id as string;
  };
  const ask = (agent: string, message: string, thread = `rules-${++n}`, message_type?: string) =>
    h.chat({ thread_id: thread, agent_id: agent, message, ...(message_type && { message_type }) });
  const rule = (extra: Record<string, unknown>) => ({ rule_key: 'track', mcp_server_id: tracking, tool_name: 'query_tracking', ...extra });

  t.test('direct response raw_json: the business payload as JSON, wrapped on request; no final model call', async (t) => {
    // Rule and allowlist name query_tracking; the carrier offers query_tracking9: one capability.
    const agent = await agentWith({ direct_response_rules: [rule({ mcp_server_id: carrier, output_mode: 'raw_json', wrap_json_code_block: true })] }, [
      { mcp_server_id: carrier, allowed_tools: ['query_tracking'] },
    ]);
    const from = h.model.bodies.length;
    const turn = await ask(agent, `Where is ${CONTAINER}?`);
    t.ok(fenced(turn.reply), 'a json fenced block');
    const payload = JSON.parse(turn.reply.replace(/^```json\n|\n```$/g, ''));
    t.equal(payload.selectNo, CONTAINER, 'selectNo is read at the top level');
    t.notOk('response' in payload, 'the response wrapper is removed');
    const keys = (value: object) => Object.keys(value).sort();
    const sub = payload.tracking[0].trackingSub[0];
    const item = sub.containerNumberListMap[0];
    t.same(
      [keys(payload), keys(payload.tracking[0]), keys(sub), keys(item), ...item.currList.map(keys)],
      [
        ['selectNo', 'tracking'],
        ['trackingSub'],
        ['containerNumberListMap', 'currentStatus', 'equipment', 'shipmentType'],
        ['currList', 'currentLocation', 'currentNewStatus', 'currentTime', 'curricon'],
        ['addtype', 'des', 'tile', 'time'],
        ['addtype', 'des', 'tile', 'time'],
      ],
      'only the projected tracking fields, at every level',
    );
    t.equal(item.curricon, 'icon-vessel', "curricon comes from the last currList event, not the item's own");
    t.match(
      turn.context.mcp_calls,
      [{ tool_name: 'query_tracking9', status: 'success', response_payload: { tool: 'query_tracking9', selectNo: CONTAINER } }],
      'the carrier tool was called',
    );
    t.same(keys(turn.context.mcp_calls[0].response_payload), ['response', 'selectNo', 'tool'], 'the audited raw payload is projected too');
    t.equal(h.model.bodies.length, from, 'no model call at all');
    t.match(turn.context.context_payload.observation, {
      mcp_direct_response: true,
      mcp_raw_passthrough: false,
      mcp_invocation_count: 1,
      mcp_output_mode: 'raw_json',
      mcp_response_rule_key: 'track',
      mcp_format_fallback_used: false,
    });
    t.equal(turn.context.turn.response_source, 'mcp_direct_response');
  });

  t.test('direct response json_subset and text; the tracking tools match each other; a rule for another server does not apply', async (t) => {
    const subset = await agentWith({
      direct_response_rules: [
        rule({ tool_name: 'query_tracking9', output_mode: 'json_subset', selected_fields: ['selectNo', 'tracking.trackingSub.currentStatus'] }),
      ],
    });
    const turn = await ask(subset, `Where is ${CONTAINER}?`);
    t.same(JSON.parse(turn.reply), { selectNo: CONTAINER, 'tracking.trackingSub.currentStatus': 'On board' }, 'only the selected fields');
    t.equal(turn.context.context_payload.observation.mcp_output_mode, 'json_subset');

    const text = await agentWith({
      direct_response_rules: [
        rule({
          output_mode: 'text',
          prefix_text: 'Shipment update:',
          selected_fields: ['tracking.trackingSub.currentStatus', 'tracking.trackingSub.containerNumberListMap.currentLocation'],
          suffix_text: 'Anything else?',
        }),
      ],
    });
    t.equal(
      (await ask(text, `Where is ${CONTAINER}?`)).reply,
      'Shipment update:\ncurrentStatus: On board\ncurrentLocation: Shanghai, CN\nAnything else?',
      'prefix, fields, suffix',
    );

    const elsewhere = await agentWith({ direct_response_rules: [rule({ mcp_server_id: everything, output_mode: 'raw_json' })] });
    h.script({ final: 'From the model.' });
    const viaModel = await ask(elsewhere, `Where is ${CONTAINER}?`);
    t.equal(viaModel.reply.startsWith('```json'), true, 'no direct rule matches, so the legacy raw passthrough (query_tracking9 listed) answers');
    t.match(viaModel.context.context_payload.observation, { mcp_raw_passthrough: true, mcp_direct_response: false, mcp_output_mode: 'raw_json' });
    t.equal(viaModel.context.turn.response_source, 'mcp_raw');
  });

  t.test('json_subset and text fall back to raw JSON when the chosen fields are missing or empty', async (t) => {
    const agent = await agentWith({
      direct_response_rules: [rule({ output_mode: 'json_subset', selected_fields: ['no.such.field'], wrap_json_code_block: true })],
    });
    const turn = await ask(agent, `Where is ${CONTAINER}?`);
    t.ok(fenced(turn.reply), 'raw JSON, wrapped as the rule asks');
    t.match(turn.context.context_payload.observation, { mcp_format_fallback_used: true, mcp_output_mode: 'raw_json', mcp_response_rule_key: 'track' });
  });

  t.test('a disabled rule and no passthrough key leave the reply to the final model', async (t) => {
    const agent = await agentWith({ direct_response_rules: [rule({ enabled: false })] }, [{ mcp_server_id: everything, allowed_tools: ['echo'] }]);
    h.script({
      selection: { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'echo' },
      arguments: { message: 'hi' },
      final: 'The tool said hi.',
    });
    const turn = await ask(agent, 'Please echo hi');
    t.equal(turn.reply, 'The tool said hi.');
    t.match(turn.context.context_payload.observation, { mcp_invocation_count: 1, mcp_direct_response: false, mcp_raw_passthrough: false });
  });

  t.test('quick match: a prefix command calls the tool with the suffix, no runtime and no model', async (t) => {
    const agent = await agentWith(
      {
        direct_response_rules: [rule({ output_mode: 'text', selected_fields: ['tracking.trackingSub.currentStatus'], prefix_text: 'Status:' })],
        quick_match_rules: [
          { prefix: '/track', mcp_server_id: tracking, tool_name: 'query_tracking', suffix_parameter_name: 'selectNo' },
          { prefix: '/status', mcp_server_id: tracking, tool_name: 'query_tracking', suffix_parameter_name: 'selectNo', response_rule_key: 'track' },
          { prefix: '/bad', mcp_server_id: tracking, tool_name: 'query_tracking', suffix_parameter_name: 'number' },
          { prefix: '/who', mcp_server_id: tracking, tool_name: 'whoami', suffix_parameter_name: 'x' },
        ],
      },
      [{ mcp_server_id: tracking, allowed_tools: ['query_tracking'] }],
    );
    const from = h.model.bodies.length;
    const raw = await ask(agent, `/track ${CONTAINER.toLowerCase()}`);
    t.equal(JSON.parse(raw.reply).selectNo, CONTAINER, 'raw JSON of the business payload; the identifier normalised');
    t.match(raw.context.context_payload.observation, {
      mcp_quick_match_prefix: '/track',
      mcp_response_rule_key: null,
      mcp_output_mode: 'raw_json',
      mcp_invocation_count: 1,
    });
    t.equal(raw.context.turn.response_source, 'mcp_quick_match');
    t.match(raw.context.mcp_calls, [
      {
        tool_name: 'query_tracking',
        status: 'success',
        origin: 'quick_match',
        request_payload: { selectNo: CONTAINER, query: `/track ${CONTAINER.toLowerCase()}`, round: 1 },
      },
    ]);
    t.notOk(spanOf(raw.context, 'rag-retrieval'), 'the runtime did not run');

    const ruled = await ask(agent, `/status ${CONTAINER}`);
    t.equal(ruled.reply, 'Status:\ncurrentStatus: On board', 'response_rule_key reuses the direct-response rule');
    t.equal(ruled.context.context_payload.observation.mcp_response_rule_key, 'track');

    const empty = await ask(agent, '/track');
    t.match(empty.reply, /^Usage: \/track <cargo number>\. Please send one cargo number/, 'an empty suffix gets usage guidance');
    t.match(empty.context.mcp_calls, [{ status: 'blocked', reason: 'empty suffix' }]);
    const two = await ask(agent, `/track ${CONTAINER} TGHU7654321`);
    t.match(two.reply, /^Usage: \/track/, 'two numbers get usage guidance too');
    const missing = await ask(agent, `/bad ${CONTAINER}`);
    t.match(missing.reply, /^Usage: \/bad/, 'a missing required schema field gets usage guidance');
    t.match(missing.context.mcp_calls, [{ status: 'blocked', reason: 'missing required arguments: selectNo' }]);
    const disallowed = await ask(agent, '/who me');
    t.equal(disallowed.reply, '/who is not available right now.', 'a tool outside the allowlist is blocked');
    t.same(
      disallowed.context.mcp_calls.map((c: any) => c.status),
      ['blocked'],
      'and never called',
    );
    t.equal(h.model.bodies.length, from, 'no model was called for any quick match');

    h.script({ final: 'normal chat' });
    const form = await ask(agent, `/track ${CONTAINER}`, undefined, 'form');
    t.not(form.context.turn.response_source, 'mcp_quick_match', 'quick match is for user_chat only');
    t.equal(form.context.context_payload.observation.mcp_quick_match_prefix, null);
  });

  t.test('query_tracking and query_tracking9 are one capability for quick match', async (t) => {
    const quick = await agentWith(
      { quick_match_rules: [{ prefix: '/track', mcp_server_id: carrier, tool_name: 'query_tracking', suffix_parameter_name: 'selectNo' }] },
      [{ mcp_server_id: carrier, allowed_tools: ['query_tracking'] }],
    );
    const found = await ask(quick, `/track ${CONTAINER}`);
    t.match(
      found.context.mcp_calls,
      [{ tool_name: 'query_tracking9', status: 'success', origin: 'quick_match', request_payload: { selectNo: CONTAINER } }],
      'the rule for query_tracking calls the mounted query_tracking9',
    );
    t.equal(JSON.parse(found.reply).selectNo, CONTAINER);
    t.match((await ask(quick, '/track')).reply, /^Usage: \/track <cargo number>/, 'an empty suffix still gets the usage guidance');
  });

  t.test('query_tracking and query_tracking9 are one capability for the AI-chosen tool name', async (t) => {
    const chosen = await agentWith(null, [
      { mcp_server_id: carrier, allowed_tools: ['query_tracking'] },
      { mcp_server_id: everything, allowed_tools: ['echo'] },
    ]);
    h.script({ selection: { selected_tool_name: 'query_tracking', should_call_now: true, missing_required_arguments: [], reason: 'maybe' } });
    const turn = await ask(chosen, 'What is the weather like?');
    t.match(
      turn.context.mcp_calls,
      [{ tool_name: 'query_tracking9', status: 'skipped', stage: 'mcp-pre-generation-gate', reason: 'no tracking content in the message' }],
      'the AI-chosen query_tracking resolves to query_tracking9 (which row 2 then stops: no tracking content)',
    );
  });

  t.test('intent gate rules: a custom capability mount takes part only when its rule matches', async (t) => {
    const agent = await agentWith({ intent_gate_rules: [{ tool_capability: 'Booking', keywords: ['reserve'], regex_patterns: ['\\bbook(ing)?\\b'] }] }, [
      { mcp_server_id: everything, allowed_tools: ['echo'], tool_capability: 'booking' },
    ]);
    h.script({ selection: { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'x' }, arguments: { message: 'x' } });
    const gated = await ask(agent, 'Please echo x');
    t.match(
      gated.context.mcp_context,
      [{ stage: 'tool-discovery', mounts: [{ gated_out: true, tools: [] }] }],
      'no keyword or pattern matches: the mount is left out before discovery',
    );
    t.match(gated.context.mcp_calls, [{ tool_name: '_tool_selection', status: 'skipped' }]);
    const open = await ask(agent, 'I want to reserve: echo x');
    t.match(open.context.mcp_context, [{ stage: 'tool-discovery', mounts: [{ gated_out: false, tools: ['echo'] }] }], 'a keyword opens it');
    const byPattern = await ask(agent, 'booking: echo x');
    t.match(byPattern.context.mcp_calls, [{ tool_name: 'echo', status: 'success' }], 'so does a pattern');
    const ungated = await agentWith(null, [{ mcp_server_id: everything, allowed_tools: ['echo'], tool_capability: 'weather' }]);
    t.match(
      (await ask(ungated, 'Please echo x')).context.mcp_context,
      [{ mounts: [{ gated_out: false }] }],
      'without an enabled rule the mount is not blocked',
    );
  });

  t.test('intent gate rules for tracking: replace uses only the rule; allow_contextual_follow_up false refuses follow-ups', async (t) => {
    const replace = await agentWith({ intent_gate_rules: [{ tool_capability: 'tracking', keywords: ['where is my box'], match_source_mode: 'replace' }] });
    const builtIn = await ask(replace, 'track my shipment');
    t.match(builtIn.context.mcp_calls, [{ tool_name: '_tool_selection', status: 'skipped' }], 'the built-in words no longer count');
    const own = await ask(replace, 'where is my box?');
    t.match(own.context.mcp_calls, [{ status: 'blocked', stage: 'mcp-pre-generation-gate' }], "the rule's keyword is tracking intent");
    const append = await agentWith({ intent_gate_rules: [{ tool_capability: 'tracking', keywords: ['where is my box'], match_source_mode: 'append' }] });
    t.match((await ask(append, 'track my shipment')).context.mcp_calls, [{ status: 'blocked' }], 'append keeps the built-in matcher');
    const byDefault = await agentWith({ intent_gate_rules: [{ tool_capability: 'tracking', keywords: ['lost luggage'], match_source_mode: 'default' }] }, [
      { mcp_server_id: tracking, allowed_tools: ['query_tracking'] },
    ]);
    t.match(
      (await ask(byDefault, 'I have lost luggage')).context.mcp_calls,
      [{ tool_name: '_tool_selection', status: 'skipped' }],
      "default: the rule's keyword is not tracking intent",
    );
    t.match(
      (await ask(byDefault, 'track my shipment')).context.mcp_calls,
      [{ status: 'blocked', stage: 'mcp-pre-generation-gate' }],
      'default keeps the built-in matcher',
    );

    const strict = await agentWith({ intent_gate_rules: [{ tool_capability: 'tracking', allow_contextual_follow_up: false }] });
    await h.seedHistory('no-follow-up', strict, [['user', `track ${CONTAINER}`]]);
    const followUp = await ask(strict, 'any update on it?', 'no-follow-up');
    t.match(
      followUp.context.mcp_calls,
      [{ status: 'blocked', stage: 'mcp-pre-generation-gate', response_payload: { kind: 'missing_arguments' } }],
      'the history identifier is not reused',
    );
  });

  t.test('patterns RE2 cannot compile and inconsistent rules are refused when the agent is saved', async (t) => {
    const save = (config: unknown) => admin.request('POST', '/agents', { name: 'x', ...AGENT, mcp_response_config: config });
    const backreference = await save({ intent_gate_rules: [{ tool_capability: 'x', regex_patterns: ['(a)\\1'] }] });
    t.equal(backreference.status, 422, 'a backreference (no linear-time engine runs it) is refused');
    t.match(backreference.body.detail[0], {
      loc: ['body', 'mcp_response_config', 'intent_gate_rules', 0, 'regex_patterns', 0],
      msg: /not a regular expression RE2 compiles/,
    });
    t.match(
      (await save({ intent_gate_rules: [{ tool_capability: 'x', regex_patterns: ['(?<=a)b'] }] })).body.detail[0].msg,
      /RE2 compiles/,
      'so is lookaround',
    );
    t.match((await save({ intent_gate_rules: [{ tool_capability: 'x', regex_patterns: ['(unclosed'] }] })).body.detail[0].msg, /RE2 compiles/);
    t.equal(
      (await save({ quick_match_rules: [{ prefix: '/t', mcp_server_id: tracking, tool_name: 'q', suffix_parameter_name: 's', response_rule_key: 'nope' }] }))
        .status,
      422,
      'response_rule_key must name a direct-response rule',
    );
    t.equal((await save({ direct_response_rules: [rule({ output_mode: 'text' })] })).status, 422, 'text needs selected_fields');
    t.equal((await save({ direct_response_rules: [rule({}), rule({})] })).status, 422, 'rule keys are unique');
    t.equal((await save({ direct_response_rules: [], surprise: true })).status, 422, 'unknown keys are refused');
    const blank = await save({
      quick_match_rules: [{ prefix: '/t', mcp_server_id: tracking, tool_name: 'q', suffix_parameter_name: 's', response_rule_key: '  ' }],
    });
    t.equal(blank.body.mcp_response_config.quick_match_rules[0].response_rule_key, null, 'a blank response_rule_key is stored as null');
    t.equal(
      (await admin.request('POST', '/agents', { name: 'x', ...AGENT, mcp_runtime_config: { history_user_message_window: -1 } })).status,
      422,
      'the window is not negative',
    );
  });
});
