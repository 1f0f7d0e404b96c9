// Quick match answers only POST /stream (spec 4.13: "only for POST /stream with message_type=user_chat"); the same
// command sent as a WebSocket customer message goes to the chat runtime.
import path from 'node:path';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { tokensOf } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

t.test('a quick-match command calls its tool over POST /stream and reaches the orchestrator over WebSocket', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const server = (
    await admin.request('POST', '/mcp-servers', {
      name: 'Everything',
      transport_type: 'stdio',
      connection_config: {
        command: process.execPath,
        args: [path.join(PROJECT_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
      },
    })
  ).body;
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Echo desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      mcp_response_config: {
        quick_match_rules: [{ prefix: '/echo', mcp_server_id: server.mcp_server_id, tool_name: 'echo', suffix_parameter_name: 'message' }],
      },
    })
  ).body;
  await admin.request('POST', `/agents/${agent.agent_id}/mcp-mounts`, { mcp_server_id: server.mcp_server_id, allowed_tools: ['echo'] });

  const http = await admin.stream({ thread_id: `qm-http-${Date.now()}`, agent_id: agent.agent_id, message: '/echo over http' });
  t.match(tokensOf(http.events), /Echo: over http/, 'POST /stream: the quick match calls the tool');

  // A customer's session: the server issues its id.
  const thread = (await admin.request('POST', `/public/agents/${agent.agent_id}/sessions`)).body.session_id as string;
  const customer = await WsClient.connect(host.url, `/public/ws/${thread}`, { query: { agent_id: agent.agent_id, role: 'customer' } });
  t.teardown(() => customer.socket.close());
  t.same(await customer.send('user_message', { content: '/echo over websocket' }), { ok: true });
  const reply = await customer.waitFor('message', (p) => p.message?.role === 'assistant');
  t.notMatch(reply.message.content, /Echo: over websocket/, 'WebSocket: no quick match');
  const turns = (await admin.request('GET', `/sessions/${thread}/turns`)).body.items;
  const context = (await admin.request('GET', `/sessions/${thread}/turns/${turns[0].turn_id}/context`)).body;
  t.equal(context.turn.response_source, 'llm_generated', 'the chat runtime answered');
  t.notOk(
    context.mcp_calls.some((c: { status: string }) => c.status === 'success'),
    'and the echo tool was not called by a quick match',
  );
});
