// Tools as tools (issue 14, item 4): a plugin that registers a tool provider, with no MCP transport and no server an
// administrator creates. The host lists it as a tool server of transport `tool_provider`; an administrator mounts it,
// and its tools go through the same pipeline as MCP tools: the mount's allowlist and max_calls_per_turn, audits listed
// with the provider's server name, and a provider that throws recorded as an error outcome.
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startToolHost } from '../helpers/mcp.js';

const WEATHER = fileURLToPath(new URL('../fixtures/plugins/tool-provider-weather', import.meta.url));

t.test('a tool provider plugin: listed, mounted, called through the tool pipeline, audited', async (t) => {
  const h = await startToolHost(t, { plugins: [WEATHER] });
  const { admin } = h;

  const servers = (await admin.request('GET', '/mcp-servers')).body.items;
  const weather = servers.find((s: { transport_type: string }) => s.transport_type === 'tool_provider');
  t.match(
    weather,
    { name: 'Weather (fixture)', description: 'Forecasts from a table', connection_config: { provider: 'weather' }, status: 'active' },
    'the host lists the provider as a tool server; nobody created it',
  );

  const byHand = await admin.request('POST', '/mcp-servers', {
    name: 'Another weather',
    transport_type: 'tool_provider',
    connection_config: { provider: 'weather' },
  });
  t.equal(byHand.status, 422, 'a tool_provider server is not created by hand');
  t.match(byHand.body.errors, [{ loc: ['body', 'transport_type'], msg: /listed by the host/ }]);
  const repoint = await admin.request('PATCH', `/mcp-servers/${weather.mcp_server_id}`, { connection_config: { provider: 'tides' } });
  t.equal(repoint.status, 422, 'nor pointed at another provider');
  const renamed = await admin.request('PATCH', `/mcp-servers/${weather.mcp_server_id}`, { description: 'Tomorrow, by city' });
  t.equal(renamed.status, 200, 'its name and description are the administrator’s to change');

  const listed = await admin.request('POST', `/mcp-servers/${weather.mcp_server_id}/test-call`, { action: 'tools/list' });
  t.same(
    listed.body.tools.map((tool: { name: string }) => tool.name),
    ['forecast', 'radar'],
  );
  const called = await admin.request('POST', `/mcp-servers/${weather.mcp_server_id}/test-call`, {
    action: 'tools/call',
    tool_name: 'forecast',
    arguments: { city: 'Oslo' },
  });
  t.match(called.body, { status: 'success', result: { city: 'Oslo', sky: 'snow' } }, 'test-call reaches the provider');
  const health = await admin.request('POST', `/mcp-servers/${weather.mcp_server_id}/health-check`);
  t.match(health.body, { ok: true, message: '2 tools' });

  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Weather desk',
      agent_type: 'chat',
      orchestrator_key: 'react_agent_v1',
      model_provider: 'openai',
      model_name: 'fixture-model',
    })
  ).body.agent_id;
  const mount = await admin.request('POST', `/agents/${agent}/mcp-mounts`, {
    mcp_server_id: weather.mcp_server_id,
    allowed_tools: ['forecast', 'radar'],
    max_calls_per_turn: 2,
  });
  t.equal(mount.status, 201, 'mounted like any tool server');
  h.model.setRespond((body) =>
    (body.messages as { role: string }[]).some((m) => m.role === 'tool')
      ? { content: 'Snow in Oslo tomorrow.' }
      : {
          tool_calls: [
            { id: 'c1', name: 'forecast', arguments: { city: 'Oslo' } },
            { id: 'c2', name: 'radar', arguments: {} },
            { id: 'c3', name: 'forecast', arguments: { city: 'Lisbon' } },
          ],
        },
  );
  const turn = await h.chat({ thread_id: 'weather-1', agent_id: agent, message: 'Will it snow in Oslo tomorrow?' });
  t.equal(turn.reply, 'Snow in Oslo tomorrow.');
  const offered = h.model.bodies.at(-2).tools.map((x: { function: { name: string } }) => x.function.name);
  t.ok(offered.includes('forecast') && offered.includes('radar'), 'the runtime is offered the provider’s tools');
  const audits = (await admin.request('GET', '/sessions/weather-1/mcp-calls')).body.items;
  t.same(
    audits.map((a: { tool_name: string; status: string; server_name: string }) => [a.tool_name, a.status, a.server_name]).sort(),
    [
      ['forecast', 'blocked', 'Weather (fixture)'],
      ['forecast', 'success', 'Weather (fixture)'],
      ['radar', 'error', 'Weather (fixture)'],
    ],
    'audited like MCP calls, under the provider’s server name; the third call is over the mount’s max_calls_per_turn',
  );
  t.match(
    audits.find((a: { tool_name: string }) => a.tool_name === 'radar'),
    { error_message: 'the radar feed is down' },
    'a provider that throws is an error outcome',
  );
});
