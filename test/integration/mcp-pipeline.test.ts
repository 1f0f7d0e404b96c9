// The MCP tool pipeline of spec 4.13 through POST /stream: core_chat_v1 with
// the real tools-mcp plugin, the tracking fixture server over stdio, the
// official everything server, the raw JSON-RPC fixture, and a scripted
// OpenAI-compatible model for the selector, the argument generator and the
// final reply. One case per row and rule of the pipeline table, every blocked
// and skipped path included. What core_chat_v1 cannot reach (it runs one
// pipeline round and never calls a tool by name) goes through the fixture
// runtime `tool_probe_v1`, which uses the same tool handle.
import t from 'tap';
import { everythingStdio, rawStdio, TOOL_RUNTIME_PLUGIN, trackingStdio } from '../fixtures/mcp/clients.js';
import { spanNames, spanOf, startToolHost, type Script } from '../helpers/mcp.js';

const CONTAINER = 'MSCU1234567';
const OTHER = 'TGHU7654321';
const AGENT_MODEL = { model_provider: 'openai', model_name: 'fixture-model', public_access_mode: 'public_anonymous' };

type AgentKey = 'tracking' | 'mixed' | 'strict' | 'noFollowUp' | 'empty' | 'probe' | 'probeRuled' | 'slow' | 'broken' | 'raw';

interface Case {
  name: string;
  agent: AgentKey;
  message: string;
  message_type?: string;
  history?: ['user' | 'assistant', string][];
  script?: Script;
  check(t: any, turn: { reply: string; context: any; stages: string[]; bodies: any[]; calls: any[] }): void;
}

const selection = (c: any) => spanOf(c, 'mcp-tool-selection-decision');
const preGate = (c: any) => spanOf(c, 'mcp-pre-generation-gate');
const preGateOf = (calls: any[]) => calls.find((x) => x.stage === 'mcp-pre-generation-gate');
const callsOf = (c: any) => c.mcp_calls as any[];
const invoked = (c: any) => callsOf(c).filter((x) => x.stage === 'mcp-call' && x.status !== 'blocked');
const discovery = (c: any) => c.mcp_context.find((e: any) => e.stage === 'tool-discovery');
const echoNow = { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'echo' };

const CASES: Case[] = [
  // Row 1: mcp-tool-selection-decision
  {
    name: 'row 1: an identifier in the message chooses the tracking tool deterministically and skips AI argument generation',
    agent: 'tracking',
    message: `Where is container ${CONTAINER}?`,
    check(t, { context, stages }) {
      t.match(selection(context), { decision: 'query_tracking', source: 'deterministic' }, 'deterministic choice');
      t.match(spanOf(context, 'mcp-argument-generation'), { skipped: true }, 'generation skipped');
      t.same(stages, ['final'], 'no selector or argument model call');
      t.match(
        invoked(context),
        [{ tool_name: 'query_tracking', status: 'success', request_payload: { selectNo: CONTAINER } }],
        'the tool is called with the identifier',
      );
    },
  },
  {
    name: 'row 1: intent without an identifier chooses the tracking tool (and row 2 stops it with guidance)',
    agent: 'tracking',
    message: 'Can you track my shipment please?',
    check(t, { context }) {
      t.match(selection(context), { decision: 'query_tracking', source: 'deterministic' });
      t.match(preGate(context), { should_attempt: false, outcome: 'blocked' });
    },
  },
  {
    name: 'row 1: small talk with only the tracking tool is skipped silently without a model call',
    agent: 'tracking',
    message: 'Hello, how are you today?',
    check(t, { context, stages, calls }) {
      t.match(selection(context), { decision: 'no_tool', source: 'deterministic' });
      t.same(stages, ['final'], 'no selector call');
      t.match(calls, [{ tool_name: '_tool_selection', status: 'skipped' }], 'a skipped _tool_selection record');
      t.equal(calls.length, 1, 'exactly one record');
      t.notOk(preGate(context), 'no later stage runs');
      t.notOk(context.context_payload.observation.mcp_guidance, 'no guidance');
    },
  },
  {
    name: 'row 1: the AI selector answers no_tool for ordinary Q&A: skipped, never the first listed tool',
    agent: 'mixed',
    message: 'What is the capital of France?',
    script: { selection: { selected_tool_name: 'no_tool', should_call_now: false, missing_required_arguments: [], reason: 'general knowledge' } },
    check(t, { context, stages, calls }) {
      t.match(selection(context), { decision: 'no_tool', source: 'ai', output_mode: 'structured' });
      t.same(stages, ['selection', 'final']);
      t.match(calls, [{ tool_name: '_tool_selection', status: 'skipped', reason: /general knowledge/ }]);
      t.equal(calls.length, 1, 'exactly one record');
    },
  },
  {
    name: 'row 1: a selector naming a tool that is not eligible is no_tool',
    agent: 'mixed',
    message: 'Please reboot the server',
    script: { selection: { selected_tool_name: 'reboot', should_call_now: true, missing_required_arguments: [], reason: 'asked' } },
    check(t, { calls }) {
      t.match(calls, [{ tool_name: '_tool_selection', status: 'skipped', reason: /"reboot", which is not eligible/ }]);
    },
  },
  {
    name: 'row 1: a selector answer with no usable JSON is skipped',
    agent: 'mixed',
    message: 'Tell me something about echoes',
    script: { selection: 'I would rather not choose.' },
    check(t, { calls, stages }) {
      t.match(calls, [{ tool_name: '_tool_selection', status: 'skipped', stage: 'mcp-tool-selection-decision', reason: /^no usable selector answer/ }]);
      t.equal(calls.length, 1, 'exactly one record');
      // The openai provider returns the text a model answered under a schema; text with no JSON object is the JSON-text
      // answer already (models/structured-output.ts), so it is not asked again. LangChain's client threw on it instead.
      t.same(stages, ['selection', 'final'], 'one selection asked by structured output, answered in prose: not asked again; no argument generation');
    },
  },
  {
    name: 'row 1: a mount with no eligible tool (its allowlist names nothing the server lists) is skipped without a model call',
    agent: 'empty',
    message: 'Please echo hello',
    check(t, { context, calls, stages }) {
      t.match(discovery(context), { mounts: [{ tools: [], error: null }] }, 'the mount was listed, and nothing passed its allowlist');
      t.match(calls, [{ tool_name: '_tool_selection', status: 'skipped', reason: 'no eligible tool' }]);
      t.same(stages, ['final']);
    },
  },
  {
    name: 'row 1: tools with an empty or blank name are filtered before selection',
    agent: 'raw',
    message: 'Good morning',
    script: { selection: { selected_tool_name: 'no_tool', should_call_now: false, missing_required_arguments: [], reason: 'greeting' } },
    check(t, { context, bodies }) {
      t.same(discovery(context).mounts[0].tools, ['lookup'], 'of the three tools listed over two pages only lookup remains');
      const catalog = String(bodies[0].messages[0].content);
      t.match(catalog, '- lookup: Looks a code up.');
      t.notMatch(catalog, 'name is empty', 'the empty-named tool is not offered');
      t.notMatch(catalog, 'name is blank', 'nor the blank-named one');
    },
  },
  {
    name: 'row 1: without structured output the selector and the generator fall back to JSON text',
    agent: 'mixed',
    message: 'Please echo hello world',
    script: {
      refuse_structured: true,
      selection: 'Sure: ```json\n{"selected_tool_name":"echo","should_call_now":true,"missing_required_arguments":[],"reason":"echo asked"}\n```',
      arguments: '{"message":"hello world"}',
    },
    check(t, { context, stages }) {
      t.match(selection(context), { decision: 'echo', source: 'ai', output_mode: 'json_text' });
      t.match(spanOf(context, 'mcp-argument-generation'), { output_mode: 'json_text' });
      t.same(stages, ['selection', 'selection', 'arguments', 'arguments', 'final'], 'each structured request is refused, then asked for text');
      t.match(invoked(context), [{ tool_name: 'echo', status: 'success', request_payload: { message: 'hello world' } }]);
    },
  },
  // Row 2: mcp-pre-generation-gate
  {
    name: 'row 2: a unique identifier in history and an elliptical follow-up attempt; generation gets the history',
    agent: 'tracking',
    history: [
      ['user', `Track ${CONTAINER} please`],
      ['assistant', `It is on board (${OTHER} was mentioned by me only).`],
    ],
    message: 'Any update on it?',
    script: { arguments: { selectNo: CONTAINER } },
    check(t, { context, stages }) {
      t.match(preGate(context), { should_attempt: true, identifier_source: 'history_follow_up' });
      t.same(stages, ['arguments', 'final']);
      t.match(invoked(context), [{ tool_name: 'query_tracking', request_payload: { selectNo: CONTAINER } }]);
    },
  },
  {
    name: 'row 2: several competing history identifiers stop with an ambiguity clarification',
    agent: 'tracking',
    history: [
      ['user', `Track ${CONTAINER}`],
      ['user', `And what about ${OTHER}?`],
    ],
    message: 'Where is it now?',
    check(t, { context, calls, stages }) {
      t.match(preGate(context), { should_attempt: false, outcome: 'blocked' });
      t.match(calls, [
        { status: 'blocked', stage: 'mcp-pre-generation-gate', response_payload: { kind: 'ambiguous_identifier', candidate_identifiers: [OTHER, CONTAINER] } },
      ]);
      t.same(stages, ['final'], 'no argument generation');
      t.match(context.context_payload.observation.mcp_guidance, { candidate_identifier_arguments: ['selectNo'] }, 'the guidance reaches the turn');
    },
  },
  {
    name: 'row 2: tracking intent with no identifier anywhere stops with structured missing-argument guidance',
    agent: 'tracking',
    message: 'Where is my container?',
    check(t, { calls, context }) {
      t.match(calls, [
        {
          status: 'blocked',
          stage: 'mcp-pre-generation-gate',
          response_payload: { kind: 'missing_arguments', missing_identifiers: ['selectNo'], candidate_identifier_arguments: ['selectNo'] },
        },
      ]);
      t.equal(invoked(context).length, 0, 'no call');
    },
  },
  {
    name: 'row 2: non-tracking content reaching the tracking tool is stopped silently',
    agent: 'mixed',
    message: 'What is the weather like?',
    script: { selection: { selected_tool_name: 'query_tracking', should_call_now: true, missing_required_arguments: [], reason: 'maybe' } },
    check(t, { calls, context }) {
      t.match(calls, [{ tool_name: 'query_tracking', status: 'skipped', stage: 'mcp-pre-generation-gate', reason: 'no tracking content in the message' }]);
      t.notOk(context.context_payload.observation.mcp_guidance, 'silent: no guidance');
    },
  },
  {
    name: 'row 2: message_type rule without an explicit identifier does not trigger generation',
    agent: 'tracking',
    message: 'track my shipment',
    message_type: 'rule',
    check(t, { calls, stages }) {
      t.match(calls, [{ status: 'skipped', stage: 'mcp-pre-generation-gate', reason: 'message_type rule without an explicit identifier' }]);
      t.same(stages, ['final']);
    },
  },
  {
    name: 'row 2: message_type form with an explicit identifier goes ahead',
    agent: 'tracking',
    message: `selectNo=${CONTAINER}`,
    message_type: 'form',
    check(t, { context }) {
      t.match(invoked(context), [{ tool_name: 'query_tracking', status: 'success' }]);
    },
  },
  {
    name: 'row 2: several identifiers in the current message stop with an ambiguity clarification',
    agent: 'tracking',
    message: `Track ${CONTAINER} and ${OTHER}`,
    check(t, { calls, stages, context }) {
      t.match(calls, [
        {
          status: 'blocked',
          stage: 'mcp-pre-generation-gate',
          reason: 'several identifiers in the current message',
          response_payload: { kind: 'ambiguous_identifier', candidate_identifiers: [CONTAINER, OTHER] },
        },
      ]);
      t.equal(invoked(context).length, 0, 'no call');
      t.same(stages, ['final'], 'no argument generation');
    },
  },
  {
    name: 'row 2: allow_contextual_follow_up=false: an elliptical follow-up does not reuse the unique history identifier',
    agent: 'noFollowUp',
    history: [['user', `Track ${CONTAINER} please`]],
    message: 'Any update on it?',
    check(t, { calls, stages }) {
      t.match(preGateOf(calls), {
        status: 'blocked',
        reason: 'tracking intent without an identifier',
        response_payload: { kind: 'missing_arguments', missing_identifiers: ['selectNo'] },
      });
      t.same(stages, ['final'], 'no argument generation');
    },
  },
  {
    name: 'row 2: a non-tracking tool with message_type other and no explicit identifier is skipped',
    agent: 'mixed',
    message: 'Please echo hello',
    message_type: 'other',
    script: { selection: echoNow },
    check(t, { calls, stages }) {
      t.match(calls, [{ tool_name: 'echo', status: 'skipped', stage: 'mcp-pre-generation-gate', reason: 'message_type other without an explicit identifier' }]);
      t.same(stages, ['selection', 'final'], 'no argument generation');
    },
  },
  {
    name: 'row 2: a non-tracking tool with message_type form and no explicit identifier is skipped',
    agent: 'mixed',
    message: 'Please echo hello',
    message_type: 'form',
    script: { selection: echoNow },
    check(t, { calls }) {
      t.match(calls, [{ tool_name: 'echo', status: 'skipped', stage: 'mcp-pre-generation-gate', reason: 'message_type form without an explicit identifier' }]);
    },
  },
  {
    name: "row 2: the AI selector's decision is reused: should_call_now false with no missing arguments is skipped silently",
    agent: 'mixed',
    message: 'What does the echo tool do?',
    script: { selection: { selected_tool_name: 'echo', should_call_now: false, missing_required_arguments: [], reason: 'only asking about it' } },
    check(t, { calls, stages, context }) {
      t.match(calls, [{ tool_name: 'echo', status: 'skipped', stage: 'mcp-pre-generation-gate', reason: 'selector: only asking about it' }]);
      t.notOk(context.context_payload.observation.mcp_guidance, 'silent: no guidance');
      t.same(stages, ['selection', 'final']);
    },
  },
  {
    name: "row 2: the AI selector's decision is reused: should_call_now false with missing arguments blocks with guidance",
    agent: 'mixed',
    message: 'Please echo something for me',
    script: { selection: { selected_tool_name: 'echo', should_call_now: false, missing_required_arguments: ['message'], reason: 'what to echo?' } },
    check(t, { calls, stages }) {
      t.match(calls, [{ tool_name: 'echo', status: 'blocked', stage: 'mcp-pre-generation-gate', response_payload: { missing_identifiers: ['message'] } }]);
      t.same(stages, ['selection', 'final'], 'no argument generation');
    },
  },
  // Row 3: mcp-argument-generation
  {
    name: 'row 3: the tool-call model gets the current message, the schema and the last 3 user messages, by structured output',
    agent: 'mixed',
    history: [
      ['user', 'first question'],
      ['user', 'second question'],
      ['assistant', 'assistant secret ABCD12345678'],
      ['user', 'third question'],
      ['user', 'fourth question'],
    ],
    message: 'Please echo hello',
    script: {
      selection: { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'echo' },
      arguments: { message: 'hello' },
    },
    check(t, { context }) {
      t.match(spanOf(context, 'mcp-argument-generation'), { skipped: false, output_mode: 'structured', argument_names: ['message'] });
    },
  },
  {
    name: 'row 3: a required field the model leaves out is not forced (row 6 blocks)',
    agent: 'mixed',
    message: 'Please echo',
    script: { selection: { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'echo' }, arguments: {} },
    check(t, { calls }) {
      t.match(calls, [{ tool_name: 'echo', status: 'blocked', stage: 'mcp-required-argument-check', response_payload: { missing_identifiers: ['message'] } }]);
    },
  },
  // Row 4: build_tool_arguments
  {
    name: 'row 4: model arguments are canonicalised to the schema names; query and round are always added',
    agent: 'mixed',
    message: 'Add 2 and 3 for me',
    script: {
      selection: { selected_tool_name: 'get-sum', should_call_now: true, missing_required_arguments: [], reason: 'sum' },
      arguments: { A: 2, b: 3, colour: 'red' },
    },
    check(t, { context }) {
      const build = context.mcp_context.find((e: any) => e.stage === 'build_tool_arguments');
      t.same(build.canonicalized, [{ from: 'A', to: 'a' }]);
      t.same(build.dropped, [{ field: 'colour', reason: 'not in the input schema' }]);
      t.match(invoked(context), [{ tool_name: 'get-sum', request_payload: { a: 2, b: 3, query: 'Add 2 and 3 for me', round: 1 } }]);
    },
  },
  {
    name: 'row 4: an identifier the model made up (not in the user messages) is dropped, and row 5 stops with guidance',
    agent: 'tracking',
    history: [['user', `Track ${CONTAINER} please`]],
    message: 'And now?',
    script: { arguments: { select_no: 'ZZZU9999999' } },
    check(t, { context, calls }) {
      const build = context.mcp_context.find((e: any) => e.stage === 'build_tool_arguments');
      t.same(build.dropped, [{ field: 'selectNo', reason: "not traceable to the user's messages" }], 'the alias is canonicalised, the value dropped');
      t.match(calls, [{ status: 'blocked', stage: 'mcp-tool-attempt-gate', response_payload: { missing_identifiers: ['selectNo'] } }]);
    },
  },
  {
    name: 'row 4: assistant history is never a source: an identifier only the assistant said is untraceable',
    agent: 'tracking',
    history: [
      ['user', 'I need to track my box'],
      ['assistant', `Is it ${OTHER}?`],
    ],
    message: 'Yes, that one. Where is it?',
    script: { arguments: { selectNo: OTHER } },
    check(t, { calls }) {
      t.match(calls, [{ status: 'blocked' }]);
      t.notMatch(JSON.stringify(calls), `"selectNo":"${OTHER}"`, 'the assistant identifier is never sent');
    },
  },
  {
    name: 'row 4: a bare identifier reply after tracking context is extracted deterministically from the current message',
    agent: 'tracking',
    history: [['user', 'I want to track my container']],
    message: 'tghu 765432 1',
    check(t, { context, stages }) {
      t.match(selection(context), { source: 'deterministic' });
      const build = context.mcp_context.find((e: any) => e.stage === 'build_tool_arguments');
      t.same(build.extracted, ['selectNo']);
      t.match(invoked(context), [{ request_payload: { selectNo: OTHER } }], 'normalised: spaces removed, upper case');
      t.same(stages, ['final']);
    },
  },
  // Row 5: mcp-tool-attempt-gate
  {
    name: 'row 5: a traceable identifier passes the attempt gate',
    agent: 'tracking',
    message: `B/L no: ${CONTAINER.toLowerCase()}`,
    check(t, { context }) {
      t.match(spanOf(context, 'mcp-tool-attempt-gate'), { should_attempt: true });
      t.match(invoked(context), [{ request_payload: { selectNo: CONTAINER } }]);
    },
  },
  {
    // Two container numbers typed without a space read as one identifier, so
    // the follow-up passes row 2; the model splits them apart again, and the
    // value is still traceable (it is the history identifier without a space).
    name: 'row 5: an identifier argument holding several identifiers stops with an ambiguity clarification',
    agent: 'tracking',
    history: [['user', `Track ${CONTAINER}${OTHER} please`]],
    message: 'Any update on it?',
    script: { arguments: { selectNo: `${CONTAINER} ${OTHER}` } },
    check(t, { context, calls, stages }) {
      t.match(preGate(context), { should_attempt: true, identifier_source: 'history_follow_up' });
      t.match(calls, [
        {
          status: 'blocked',
          stage: 'mcp-tool-attempt-gate',
          reason: 'the identifier argument holds several identifiers',
          response_payload: { kind: 'ambiguous_identifier', candidate_identifiers: [CONTAINER, OTHER] },
        },
      ]);
      t.equal(invoked(context).length, 0, 'no call');
      t.same(stages, ['arguments', 'final']);
    },
  },
  // Row 6: mcp-required-argument-check
  {
    name: 'row 6: every required field present proceeds to mcp-call',
    agent: 'mixed',
    message: 'Please echo hi',
    script: { selection: { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'echo' }, arguments: { message: 'hi' } },
    check(t, { context }) {
      t.match(spanOf(context, 'mcp-required-argument-check'), { should_attempt: true, missing_required: [] });
      t.same(
        spanNames(context).filter((n) => n.startsWith('mcp-')),
        [
          'mcp-tool-selection-decision',
          'mcp-pre-generation-gate',
          'mcp-argument-generation',
          'mcp-tool-attempt-gate',
          'mcp-required-argument-check',
          'mcp-pre-call-gate',
          'mcp-post-call-gate',
          'mcp-call',
        ],
        "the stages run in order, each in its span (the call's gates end within it)",
      );
    },
  },
  // Limits and failures
  {
    name: 'limits: past max_tool_calls_total_per_request the execution is marked blocked',
    agent: 'strict',
    message: `Where is ${CONTAINER}?`,
    check(t, { calls }) {
      t.match(calls, [{ tool_name: 'query_tracking', status: 'blocked', stage: 'mcp-call', reason: 'max_tool_calls_total_per_request (0) reached' }]);
    },
  },
  {
    name: "limits: a mount's max_calls_per_turn blocks the second pipeline round of a turn (core_chat_v1 runs one round, the probe runtime two)",
    agent: 'probe',
    message: `Where is ${CONTAINER}?`,
    check(t, { calls }) {
      t.match(calls, [
        { tool_name: 'query_tracking', status: 'success', stage: 'mcp-call', origin: 'chat', round: 1 },
        { tool_name: 'query_tracking', status: 'blocked', stage: 'mcp-call', origin: 'chat', round: 2, reason: 'max_calls_per_turn (1) of the mount reached' },
      ]);
      t.equal(calls.length, 2);
    },
  },
  {
    name: 'limits: a quick match past max_tool_calls_total_per_request is blocked and answers without a call',
    agent: 'strict',
    message: `/track ${CONTAINER}`,
    check(t, { reply, calls, stages, context }) {
      t.equal(reply, '/track cannot run in this request: max_tool_calls_total_per_request (0) reached.');
      t.match(calls, [
        { tool_name: 'query_tracking', status: 'blocked', stage: 'mcp-call', origin: 'quick_match', reason: 'max_tool_calls_total_per_request (0) reached' },
      ]);
      t.equal(context.turn.response_source, 'mcp_quick_match');
      t.equal(context.context_payload.observation.mcp_invocation_count, 0);
      t.same(stages, [], 'no model call');
    },
  },
  // The tool handle (ToolHandle.call) of runtimes that call tools by name
  {
    name: 'tool handle: a tool that is not mounted and allowed is blocked',
    agent: 'probe',
    message: JSON.stringify({ calls: [['reboot', {}]] }),
    check(t, { reply, calls }) {
      t.match(calls, [
        {
          tool_name: 'reboot',
          status: 'blocked',
          stage: 'mcp-call',
          origin: 'tool_handle',
          reason: 'not a mounted, allowed tool of this agent',
          mount_id: null,
        },
      ]);
      t.match(JSON.parse(reply), [{ status: 'error', error: 'tool "reboot" is not available to this agent' }]);
    },
  },
  {
    name: 'tool handle: a missing required argument is blocked before any call',
    agent: 'probe',
    message: JSON.stringify({ calls: [['echo', {}]] }),
    check(t, { reply, calls }) {
      t.match(calls, [
        { tool_name: 'echo', status: 'blocked', stage: 'mcp-required-argument-check', origin: 'tool_handle', reason: 'missing required arguments: message' },
      ]);
      t.equal(calls.length, 1, 'no mcp-call record');
      t.match(JSON.parse(reply), [{ status: 'error', result: { missing_identifiers: ['message'] } }]);
    },
  },
  {
    name: 'tool handle: query_tracking9 reaches the mounted query_tracking (one capability)',
    agent: 'probe',
    message: JSON.stringify({ calls: [['query_tracking9', { selectNo: CONTAINER }]] }),
    check(t, { reply, calls }) {
      t.match(calls, [{ tool_name: 'query_tracking', status: 'success', origin: 'tool_handle' }]);
      t.match(JSON.parse(reply), [{ status: 'success', result: { selectNo: CONTAINER } }]);
    },
  },
  {
    name: 'a failing tool is audited error with the failure minimum raw JSON',
    agent: 'mixed',
    message: 'Run the failing check',
    script: { selection: { selected_tool_name: 'fail', should_call_now: true, missing_required_arguments: [], reason: 'asked' }, arguments: {} },
    check(t, { calls }) {
      t.match(calls, [
        {
          tool_name: 'fail',
          status: 'error',
          response_payload: { server_name: 'Tracking', tool_name: 'fail', status: 'error', error_message: 'tracking backend unavailable' },
        },
      ]);
    },
  },
  {
    name: 'a large tool result reaches the model cut to [mcp] result_context_chars, saying so; the audit keeps it whole',
    agent: 'mixed',
    message: 'Flood me with 50000 bytes',
    script: {
      selection: { selected_tool_name: 'flood', should_call_now: true, missing_required_arguments: [], reason: 'asked' },
      arguments: { bytes: 50_000 },
    },
    check(t, { calls, bodies }) {
      t.match(calls, [{ tool_name: 'flood', status: 'success' }]);
      t.equal(calls[0].response_payload.length, 50_000, 'the audit holds all 50,000 characters');
      const system = String(bodies.at(-1).messages[0].content);
      t.match(
        system,
        `[flood] ${'x'.repeat(20_000)}\n[cut: the tool answered 50000 characters; the first 20000 are shown ([mcp] result_context_chars)]`,
        'the model gets the first 20,000 and the note',
      );
      t.notMatch(system, 'x'.repeat(20_001), 'and no more');
    },
  },
  {
    // Right after a call on the same server, so its connection is warm and tools/list fits the short timeout.
    name: "failures: a call past the mount's timeout_ms is audited timeout, and the reply goes on",
    agent: 'slow',
    message: 'Please wait 60000 ms',
    script: { selection: { selected_tool_name: 'slow', should_call_now: true, missing_required_arguments: [], reason: 'asked' }, arguments: { ms: 60_000 } },
    check(t, { reply, calls }) {
      t.match(calls, [
        {
          tool_name: 'slow',
          status: 'timeout',
          stage: 'mcp-call',
          error_message: /timed out after 2000 ms/,
          response_payload: { server_name: 'Tracking', tool_name: 'slow', status: 'error' },
        },
      ]);
      t.equal(reply, 'Here is what I found.', 'the final model still answers');
    },
  },
  {
    name: 'failures: a server whose tools/list fails and one that crashes leave the reply intact, with the errors in mcp_context',
    agent: 'broken',
    message: 'Please look up code AB12',
    check(t, { reply, context, calls }) {
      t.equal(reply, 'Here is what I found.', 'the reply is the final model answer');
      const mounts = discovery(context).mounts;
      t.match(
        mounts.find((m: any) => m.server_name === 'Failing list'),
        { tools: [], error: /tools\/list failed: .*tool registry unavailable/ },
        'the JSON-RPC error of tools/list',
      );
      t.match(
        mounts.find((m: any) => m.server_name === 'Crashing'),
        { tools: [], error: /exited with code 3/ },
        'the crashed server, with its exit code',
      );
      t.match(calls, [{ tool_name: '_tool_selection', status: 'skipped', reason: 'no eligible tool' }]);
    },
  },
  {
    name: 'response rules: the legacy raw passthrough answers unwrapped JSON by default',
    agent: 'raw',
    message: 'Please look up code AB12',
    script: {
      selection: { selected_tool_name: 'lookup', should_call_now: true, missing_required_arguments: [], reason: 'lookup' },
      arguments: { code: 'AB12' },
    },
    check(t, { reply, context, stages }) {
      t.equal(reply, JSON.stringify({ code: 'AB12', found: true }, null, 2), 'raw JSON, not in a fenced block');
      t.match(context.context_payload.observation, { mcp_raw_passthrough: true, mcp_output_mode: 'raw_json', mcp_direct_response: false });
      t.equal(context.turn.response_source, 'mcp_raw');
      t.same(stages, ['selection', 'arguments'], 'no final model call');
    },
  },
  {
    name: 'response rules: a direct-response rule needs exactly one invocation; a second round (probe runtime; core_chat_v1 runs one) returns to the aggregated summary',
    agent: 'probeRuled',
    message: `Where is ${CONTAINER}?`,
    check(t, { reply, context }) {
      const [first, second] = JSON.parse(reply);
      t.match(
        first,
        {
          action: 'reply',
          response_source: 'mcp_direct_response',
          observation: { mcp_direct_response: true, mcp_invocation_count: 1, mcp_response_rule_key: 'track' },
        },
        'one invocation: the rule answers',
      );
      t.match(
        second,
        {
          action: 'continue',
          tool_results: [{ tool_name: 'query_tracking' }],
          observation: { mcp_direct_response: false, mcp_invocation_count: 2, mcp_response_rule_key: null },
        },
        'two: the results go to the final call',
      );
      t.match(
        context.context_payload.observation,
        { mcp_direct_response: false, mcp_output_mode: null, mcp_invocation_count: 2 },
        'the turn records no direct response',
      );
    },
  },
];

t.test('the 4.13 tool pipeline, row by row', async (t) => {
  // `get-sum-raw` matches no tool (keys match exactly); `lookup` is the raw fixture's tool. No wrap setting: the default.
  const h = await startToolHost(t, { mcpToml: '[mcp]\nraw_passthrough_tool_keys = ["get-sum-raw", "lookup"]', plugins: [TOOL_RUNTIME_PLUGIN] });
  const { admin } = h;
  const newServer = async (name: string, connection_config: Record<string, unknown>) =>
    (await admin.request('POST', '/mcp-servers', { name, transport_type: 'stdio', connection_config })).body;
  const tracking = await newServer('Tracking', trackingStdio());
  const everything = await newServer('Everything', everythingStdio());
  const raw = await newServer('Raw', rawStdio());
  const failingList = await newServer('Failing list', rawStdio('--fail-list'));
  const crashing = await newServer('Crashing', { command: process.execPath, args: ['-e', 'process.exit(3)'] });
  const agents: Record<AgentKey, string> = {} as never;
  const newAgent = async (name: string, extra: Record<string, unknown> = {}) => {
    const created = await admin.request('POST', '/agents', { name, agent_type: 'chat', ...AGENT_MODEL, ...extra });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    return created.body.agent_id as string;
  };
  const mount = (agent: string, server: { mcp_server_id: string }, policy: Record<string, unknown> = {}) =>
    admin.request('POST', `/agents/${agent}/mcp-mounts`, { mcp_server_id: server.mcp_server_id, ...policy });
  agents.tracking = await newAgent('Tracking desk');
  agents.strict = await newAgent('Strict desk', {
    max_tool_calls_total_per_request: 0,
    mcp_response_config: {
      quick_match_rules: [{ prefix: '/track', mcp_server_id: tracking.mcp_server_id, tool_name: 'query_tracking', suffix_parameter_name: 'selectNo' }],
    },
  });
  agents.noFollowUp = await newAgent('No follow-up desk', {
    mcp_response_config: { intent_gate_rules: [{ tool_capability: 'tracking', allow_contextual_follow_up: false }] },
  });
  agents.mixed = await newAgent('Mixed desk');
  agents.empty = await newAgent('Empty desk');
  agents.probe = await newAgent('Probe desk', { orchestrator_key: 'tool_probe_v1' });
  agents.probeRuled = await newAgent('Probe desk with a rule', {
    orchestrator_key: 'tool_probe_v1',
    mcp_response_config: {
      direct_response_rules: [{ rule_key: 'track', mcp_server_id: tracking.mcp_server_id, tool_name: 'query_tracking', output_mode: 'raw_json' }],
    },
  });
  agents.slow = await newAgent('Slow desk');
  agents.broken = await newAgent('Broken desk');
  agents.raw = await newAgent('Raw desk');
  for (const id of [agents.tracking, agents.strict, agents.noFollowUp]) await mount(id, tracking, { allowed_tools: ['query_tracking'] });
  await mount(agents.mixed, tracking, { allowed_tools: ['query_tracking', 'fail', 'flood'], priority: 5 });
  await mount(agents.mixed, everything, { allowed_tools: ['echo', 'get-sum'] });
  await mount(agents.empty, everything, { allowed_tools: ['no_such_tool'] });
  await mount(agents.probe, tracking, { allowed_tools: ['query_tracking'], max_calls_per_turn: 1 });
  await mount(agents.probe, everything, { allowed_tools: ['echo'] });
  await mount(agents.probeRuled, tracking, { allowed_tools: ['query_tracking'], max_calls_per_turn: 2 });
  await mount(agents.slow, tracking, { allowed_tools: ['slow'], timeout_ms: 2000 });
  await mount(agents.broken, failingList);
  await mount(agents.broken, crashing);
  await mount(agents.raw, raw);

  for (const [index, c] of CASES.entries()) {
    await t.test(c.name, async (t) => {
      const thread = `pipeline-${index}`;
      if (c.history) await h.seedHistory(thread, agents[c.agent], c.history);
      h.script(c.script ?? {});
      const from = h.model.bodies.length;
      const turn = await h.chat({ thread_id: thread, agent_id: agents[c.agent], message: c.message, ...(c.message_type && { message_type: c.message_type }) });
      t.equal(turn.context.turn.status, 'completed', 'the turn completes');
      c.check(t, { ...turn, stages: h.stagesSince(from), bodies: h.model.bodies.slice(from), calls: callsOf(turn.context) });
    });
  }

  await t.test('mount policy: an inactive mount is left out of the turn; switched on, it serves', async (t) => {
    const desk = await newAgent('Inactive desk');
    const created = (await mount(desk, tracking, { allowed_tools: ['query_tracking'], is_active: false })).body;
    const off = await h.chat({ thread_id: 'inactive-off', agent_id: desk, message: `Where is ${CONTAINER}?` });
    t.notOk(discovery(off.context), 'no mount is discovered');
    t.same(off.context.mcp_calls, [], 'nothing is called or audited');
    await admin.request('PATCH', `/agents/${desk}/mcp-mounts/${created.mount_id}`, { is_active: true });
    const on = await h.chat({ thread_id: 'inactive-on', agent_id: desk, message: `Where is ${CONTAINER}?` });
    t.match(invoked(on.context), [{ tool_name: 'query_tracking', status: 'success', mount_id: created.mount_id }], 'the same mount, active, serves');
  });

  await t.test("mount policy: when two mounts offer the same tool, the higher priority's serves it", async (t) => {
    const second = await newServer('Tracking B', trackingStdio());
    const desk = await newAgent('Priority desk');
    const low = (await mount(desk, tracking, { allowed_tools: ['query_tracking'], priority: 1 })).body;
    const high = (await mount(desk, second, { allowed_tools: ['query_tracking'], priority: 10 })).body;
    const first = await h.chat({ thread_id: 'priority-1', agent_id: desk, message: `Where is ${CONTAINER}?` });
    t.match(invoked(first.context), [{ mcp_server_id: second.mcp_server_id, mount_id: high.mount_id }], 'priority 10 wins over 1, though mounted later');
    t.same(
      discovery(first.context).mounts.map((m: any) => m.mount_id),
      [high.mount_id, low.mount_id],
      'mounts are discovered highest priority first',
    );
    await admin.request('PATCH', `/agents/${desk}/mcp-mounts/${low.mount_id}`, { priority: 20 });
    const after = await h.chat({ thread_id: 'priority-2', agent_id: desk, message: `Where is ${CONTAINER}?` });
    t.match(invoked(after.context), [{ mcp_server_id: tracking.mcp_server_id, mount_id: low.mount_id }], 'raised to 20, the other mount serves it');
  });

  await t.test('row 3: the generator sees the current message, the schema and only the last 3 user messages, never the assistant', async (t) => {
    const body = h.model.bodies.find(
      (b) => String(b.messages[0].content).startsWith('You prepare the arguments') && String(b.messages[1].content).includes('fourth question'),
    );
    const prompt = String(body.messages[1].content);
    t.match(
      prompt,
      /second question[\s\S]*third question[\s\S]*fourth question[\s\S]*Current message:\nPlease echo hello/,
      'the window of three, oldest first, then the current message',
    );
    t.notMatch(prompt, 'first question', 'older user messages are outside the window');
    t.notMatch(prompt, 'ABCD12345678', 'assistant messages are never given');
    t.match(String(body.messages[0].content), '"required":["message"]', 'the tool schema is in the prompt');
    t.equal(body.response_format.type, 'json_schema', 'structured output is asked for');
    t.same(body.response_format.json_schema.schema.required, ['message'], "with the tool's input schema");
  });

  await t.test('mcp_runtime_config: history_user_message_window 0 gives the current message only; prompt guidance is appended', async (t) => {
    await admin.request('PATCH', `/agents/${agents.mixed}`, {
      mcp_runtime_config: {
        history_user_message_window: 0,
        tool_selection_prompt_guidance: 'Prefer echo for repeats.',
        tool_argument_prompt_guidance: 'Keep the text short.',
      },
    });
    t.teardown(() => admin.request('PATCH', `/agents/${agents.mixed}`, { mcp_runtime_config: null }).then(() => undefined));
    await h.seedHistory('window-0', agents.mixed, [['user', 'an earlier question']]);
    h.script({ selection: { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'echo' }, arguments: { message: 'x' } });
    const from = h.model.bodies.length;
    await h.chat({ thread_id: 'window-0', agent_id: agents.mixed, message: 'Please echo x' });
    const [selector, generator] = h.model.bodies.slice(from);
    t.notMatch(String(generator.messages[1].content), 'an earlier question', 'no history with window 0');
    t.match(String(selector.messages[0].content), 'Prefer echo for repeats.', 'selection guidance is appended');
    t.match(String(generator.messages[0].content), 'Keep the text short.', 'argument guidance is appended');
  });

  await t.test('the final model call answers from the tool result, and the turn records the observation fields', async (t) => {
    h.script({ final: 'Your container is on board.' });
    const from = h.model.bodies.length;
    const turn = await h.chat({ thread_id: 'final-call', agent_id: agents.tracking, message: `status of ${CONTAINER}` });
    t.equal(turn.reply, 'Your container is on board.');
    const system = String(h.model.bodies[from].messages[0].content);
    t.match(system, /\[query_tracking\] \{"selectNo":"MSCU1234567","tracking":/, 'the business payload (selectNo from the top level) is in the system message');
    t.same(
      turn.context.context_payload.observation,
      {
        rag_chunk_count: 0,
        skill_result_count: 0,
        mcp_invocation_count: 1,
        mcp_raw_passthrough: false,
        mcp_direct_response: false,
        mcp_output_mode: null,
        mcp_response_rule_key: null,
        mcp_quick_match_prefix: null,
        mcp_format_fallback_used: false,
      },
      'every observation field of 4.13',
    );
    t.equal(turn.context.turn.response_source, 'llm_generated');
  });

  await t.test('the guidance reaches the final model call as structured context', async (t) => {
    const from = h.model.bodies.length;
    await h.chat({ thread_id: 'guidance', agent_id: agents.tracking, message: 'track my parcel' });
    const system = String(h.model.bodies[from].messages[0].content);
    t.match(system, 'ask the user for one bill of lading, container or booking number');
    t.match(system, '"missing_identifiers":["selectNo"]');
  });

  await t.test('react_agent_v1 uses the same tool handle: allowlist, required arguments, max_calls_per_turn, audits', async (t) => {
    const react = await newAgent('React desk', { orchestrator_key: 'react_agent_v1' });
    await admin.request('POST', `/agents/${react}/mcp-mounts`, { mcp_server_id: everything.mcp_server_id, allowed_tools: ['echo'], max_calls_per_turn: 1 });
    h.model.setRespond((body) =>
      (body.messages as any[]).some((m) => m.role === 'tool')
        ? { content: 'done' }
        : {
            tool_calls: [
              { id: 'c1', name: 'echo', arguments: { message: 'one' } },
              { id: 'c2', name: 'echo', arguments: { message: 'two' } },
            ],
          },
    );
    const turn = await h.chat({ thread_id: 'react-limits', agent_id: react, message: 'Echo twice' });
    const offered = h.model.bodies.at(-2).tools.map((x: any) => x.function.name);
    t.same(
      offered.filter((name: string) => !['schedule_task', 'list_scheduled_tasks', 'cancel_scheduled_task'].includes(name)),
      ['search_knowledge', 'echo'],
      'of the MCP tools, only the allowed one is offered (beside retrieval and scheduling)',
    );
    const outcomes = turn.context.mcp_calls.map((c: any) => `${c.origin}:${c.status}:${c.reason ?? ''}`).sort();
    t.same(
      outcomes,
      ['tool_handle:blocked:max_calls_per_turn (1) of the mount reached', 'tool_handle:success:'],
      'the second call is blocked by the mount policy',
    );
    t.equal(turn.context.context_payload.observation.mcp_invocation_count, 1, 'one real invocation is recorded');
  });

  await t.test('GET /sessions/{id}/mcp-calls and /agents/{id}/mcp-calls list the audits with trace ids', async (t) => {
    const session = await admin.request('GET', '/sessions/pipeline-0/mcp-calls');
    t.equal(session.status, 200);
    const [call] = session.body.items;
    const turns = await admin.request('GET', '/sessions/pipeline-0/turns');
    t.match(call, { tool_name: 'query_tracking', status: 'success', trace_id: turns.body.items[0].trace_id, round: 1, origin: 'chat' });
    const agent = await admin.request('GET', `/agents/${agents.tracking}/mcp-calls?limit=2`);
    t.equal(agent.body.items.length, 2);
    t.ok(agent.body.next_cursor, 'paged');
    const next = await admin.request('GET', `/agents/${agents.tracking}/mcp-calls?limit=2&cursor=${agent.body.next_cursor}`);
    t.notSame(next.body.items[0].call_id, agent.body.items[0].call_id, 'the next page goes on');
    t.equal((await admin.request('GET', '/sessions/nope/mcp-calls')).status, 404);
  });
});
