// Issue 15 item 8: a client generated from /openapi.json at build time calls the host with typed requests and
// answers. This file is type-checked by the build (scripts/build.mjs): a route whose shape drifts from what these
// calls read fails the build, not only this test.
import { createAgentHostClient } from '@agent-host/client';
import t from 'tap';
import { challengeHeader } from '../helpers/admins.js';
import { AdminClient, startTestHost } from '../helpers/host.js';

t.test('the generated client: agents, knowledge, MCP and sessions with an API token', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const made = await admin.request('POST', '/admin/api-tokens', { name: 'generated client' }, await challengeHeader(admin));
  const client = createAgentHostClient(host.url, { token: made.body.token as string });

  const created = await client.POST('/agents', { body: { name: 'Typed', agent_type: 'chat', multitask_strategy: 'reject' } });
  t.equal(created.response.status, 201);
  const agent = created.data!;
  t.match(agent, { name: 'Typed', agent_type: 'chat', multitask_strategy: 'reject', judge_prompt_version: 'default' });
  const fetched = await client.GET('/agents/{agent_id}', { params: { path: { agent_id: agent.agent_id } } });
  t.equal(fetched.data?.agent_id, agent.agent_id, 'GET /agents/{agent_id} with a typed path parameter');
  const page = await client.GET('/agents', { params: { query: { limit: 10 } } });
  t.ok(
    page.data?.items.some((a) => a.agent_id === agent.agent_id),
    'a typed page of agents',
  );

  const missing = await client.GET('/agents/{agent_id}', { params: { path: { agent_id: '00000000-0000-0000-0000-000000000000' } } });
  t.equal(missing.response.status, 404);
  t.equal(missing.error?.code, 'AGENT_NOT_FOUND', 'errors are typed too: a catalog code');

  const source = await client.POST('/knowledge-sources', { body: { name: 'Handbook', chunking_strategy: 'recursive_character' } });
  t.equal(source.response.status, 201);
  t.equal(source.data?.document_count, 0, 'a typed knowledge source');
  const sources = await client.GET('/knowledge-sources', {});
  t.equal(sources.data?.items[0]?.source_id, source.data?.source_id);

  const servers = await client.GET('/mcp-servers', {});
  t.same(servers.data?.items, [], 'a typed page of MCP servers');

  const sessions = await client.GET('/sessions', { params: { query: { agent_id: agent.agent_id } } });
  t.same(sessions.data?.items, [], 'a typed page of sessions');
  const cancel = await client.POST('/sessions/{session_id}/cancel', { params: { path: { session_id: 'nothing-runs' } } });
  t.equal(cancel.error?.code, 'NO_TURN_RUNNING');
});
