// The approval checkpoint of the tool pipeline (spec 4.13): a mount with approval = "operator" holds each call as a
// request; the turn answers that it waits, operators see the request (REST and a WebSocket event for
// administrators only), and an audited approval runs the call and posts its result to the session, a rejection
// calls nothing. Quick match and the orchestrator's pipeline share the checkpoint.
import t from 'tap';
import { everythingStdio } from '../fixtures/mcp/clients.js';
import { startToolHost } from '../helpers/mcp.js';
import { query } from '../helpers/services.js';
import { WsClient } from '../helpers/ws.js';

t.test('tool calls of a mount that needs approval wait for an operator', async (t) => {
  const tools = await startToolHost(t);
  const { admin, host } = tools;
  const server = (await admin.request('POST', '/mcp-servers', { name: 'Everything', transport_type: 'stdio', connection_config: everythingStdio() })).body;
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Guarded desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'fixture-model',
      mcp_response_config: {
        quick_match_rules: [{ prefix: '/echo', mcp_server_id: server.mcp_server_id, tool_name: 'echo', suffix_parameter_name: 'message' }],
      },
    })
  ).body;
  const mount = await admin.request('POST', `/agents/${agent.agent_id}/mcp-mounts`, {
    mcp_server_id: server.mcp_server_id,
    allowed_tools: ['echo'],
    approval: 'operator',
  });
  t.equal(mount.body.approval, 'operator', 'the mount carries the approval policy');
  const approvalsOf = async (thread: string) => (await admin.request('GET', `/sessions/${thread}/tool-approvals`)).body.items;
  const callsOf = async (thread: string) => (await admin.request('GET', `/sessions/${thread}/mcp-calls`)).body.items;
  const sockets: WsClient[] = [];
  t.teardown(() => sockets.forEach((s) => s.socket.close()));

  t.test('quick match: held, seen by operators only, approved: the call runs once and its result is posted', async (t) => {
    // A customer's session: the server issues its id.
    const thread = (await admin.request('POST', `/public/agents/${agent.agent_id}/sessions`)).body.session_id as string;
    await tools.chat({ thread_id: thread, agent_id: agent.agent_id, message: 'hi' });
    const operator = await WsClient.connect(host.url, `/ws/${thread}`, { cookie: admin.cookieHeader() });
    const customer = await WsClient.connect(host.url, `/public/ws/${thread}`, { query: { agent_id: agent.agent_id } });
    sockets.push(operator, customer);
    const { reply, context } = await tools.chat({ thread_id: thread, agent_id: agent.agent_id, message: '/echo hello approvals' });
    t.match(reply, /needs an operator's approval/, 'the turn answers that the call waits');
    t.match(
      context.mcp_calls,
      [{ tool_name: 'echo', status: 'blocked', stage: 'mcp-approval-checkpoint', origin: 'quick_match' }],
      'the held call is audited as blocked by the checkpoint, not made',
    );
    const [held] = await approvalsOf(thread);
    t.match(
      held,
      { status: 'pending', tool_name: 'echo', origin: 'quick_match', arguments: { message: 'hello approvals' } },
      'operators see the request over REST',
    );
    t.match(await operator.waitFor('tool_approval'), { approval: { approval_id: held.approval_id, status: 'pending' } }, 'and as a WebSocket event');
    const approved = await admin.request('POST', `/tool-approvals/${held.approval_id}/approve`);
    t.equal(approved.status, 200);
    t.match(approved.body, { status: 'approved', decided_by: String, result: 'Echo: hello approvals' }, 'the approved call ran');
    const posted = await customer.waitFor('message', (p) => p.message.metadata?.tool_approval_id === held.approval_id);
    t.match(posted.message, { role: 'assistant', content: /Echo: hello approvals/ }, 'its result is posted to the session');
    t.notOk(
      customer.received.some((r) => r.type === 'tool_approval'),
      'the customer socket never sees the request',
    );
    t.match(
      (await callsOf(thread)).filter((c: { status: string }) => c.status === 'success'),
      [{ tool_name: 'echo', origin: 'approval' }],
      'the call is audited once, as approved',
    );
    const [audit] = await query<{ actor_id: string }>(
      host.databaseUrl,
      "SELECT actor_id FROM admin_action_audits WHERE action = 'mcp.tool_approval.approve' AND target_id = $1",
      [held.approval_id],
    );
    t.ok(audit?.actor_id, 'the approval is audited with the operator');
    t.equal((await admin.request('POST', `/tool-approvals/${held.approval_id}/approve`)).status, 409, 'a decided request cannot be decided again');
  });

  t.test('quick match: rejected, the tool is never called', async (t) => {
    const thread = `reject-qm-${Date.now()}`;
    await tools.chat({ thread_id: thread, agent_id: agent.agent_id, message: '/echo never' });
    const [held] = await approvalsOf(thread);
    const rejected = await admin.request('POST', `/tool-approvals/${held.approval_id}/reject`);
    t.match(rejected.body, { status: 'rejected', result: null });
    t.same(
      (await callsOf(thread)).filter((c: { status: string }) => c.status === 'success'),
      [],
      'no call was made',
    );
    const messages = (await admin.request('GET', `/sessions/${thread}/messages`)).body.items;
    t.notOk(
      messages.some((m: { content: string }) => /Echo: never/.test(m.content)),
      'nothing is posted',
    );
  });

  t.test("the orchestrator's pipeline stops at the same checkpoint, and an approval posts the result", async (t) => {
    const thread = `approve-chat-${Date.now()}`;
    tools.script({
      selection: { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'asked to echo' },
      arguments: { message: 'from the pipeline' },
    });
    const { reply, context } = await tools.chat({ thread_id: thread, agent_id: agent.agent_id, message: 'Please echo something for me' });
    t.match(reply, /needs an operator's approval/);
    t.equal(context.turn.response_source, 'mcp_approval_pending');
    const stages = context.context_payload.trace_spans.map((s: { name: string }) => s.name).filter((n: string) => n.startsWith('mcp-'));
    t.same(
      stages.slice(-3),
      ['mcp-pre-call-gate', 'mcp-approval-checkpoint', 'mcp-call'],
      'the pre-call gate, then the checkpoint, named stages of the turn trace; no post-call gate without a call',
    );
    const [held] = await approvalsOf(thread);
    t.match(held, { status: 'pending', origin: 'chat', arguments: { message: 'from the pipeline' } });
    const approved = await admin.request('POST', `/tool-approvals/${held.approval_id}/approve`);
    t.match(approved.body, { status: 'approved', result: 'Echo: from the pipeline' });

    const rejectedThread = `reject-chat-${Date.now()}`;
    tools.script({
      selection: { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'asked to echo' },
      arguments: { message: 'never from the pipeline' },
    });
    await tools.chat({ thread_id: rejectedThread, agent_id: agent.agent_id, message: 'Please echo something else' });
    const [second] = await approvalsOf(rejectedThread);
    t.match(
      (await admin.request('POST', `/tool-approvals/${second.approval_id}/reject`)).body,
      { status: 'rejected', origin: 'chat' },
      'a pipeline call is rejected the same way',
    );
    t.same(
      (await callsOf(rejectedThread)).filter((c: { status: string }) => c.status === 'success'),
      [],
      'and never made',
    );
  });
});
