// MCP tools as a new user meets them, on a host started by the CLI with debug
// logging: register the official everything server, list its tools with
// test-call, mount it on an agent and get a tool-backed answer through
// POST /stream (a scripted OpenAI-compatible model; and the offline default
// through a quick-match command). Then a credential's secret, handed to the
// server's environment and echoed back by its get-env tool, is shown never
// to appear in a response, an audit row, a stored turn or a log line.
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { everythingStdio } from '../fixtures/mcp/clients.js';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { startHostProcess } from '../helpers/cli.js';
import { AdminClient } from '../helpers/host.js';
import { stageOf } from '../helpers/mcp.js';
import { createTestDatabase, query } from '../helpers/services.js';
import { tokensOf } from '../helpers/sse.js';

const SECRET = 'sk-mcp-e2e-Hq4Wz8Kp2Lm7Vd3Rt';

t.test('everything server: register, list, mount, answer; the secret stays secret', async (t) => {
  let selection: Record<string, unknown> = {};
  let args: Record<string, unknown> = {};
  const model = await startOpenAiFixture({
    respond: (body) => {
      const stage = stageOf(body);
      if (stage === 'selection') return { content: JSON.stringify(selection) };
      if (stage === 'arguments') return { content: JSON.stringify(args) };
      // The final answer repeats the tool result it was given, so the reply is tool-backed.
      const tool = /\[(?:echo|get-env)\] (.*)/.exec(String(body.messages[0].content))?.[1];
      return { content: tool ? `The tool says: ${tool}` : 'No tool result.' };
    },
  });
  t.teardown(() => model.close());
  const configFile = path.join(os.tmpdir(), `agent-host-mcp-e2e-${process.pid}.toml`);
  await writeFile(
    configFile,
    [
      '[[models.catalog]]',
      'model_name = "fixture-model"',
      'model_provider = "openai"',
      'description = "scripted"',
      'category = "chat"',
      `options = { base_url = ${JSON.stringify(model.url)} }`,
    ].join('\n'),
  );
  t.teardown(() => rm(configFile, { force: true }));
  const databaseUrl = await createTestDatabase(t);
  const { url, run } = await startHostProcess(t, databaseUrl, { LOG_LEVEL: 'debug', AGENT_HOST_CONFIG: configFile }, 'mcp');
  const admin = new AdminClient(url);
  await admin.login();
  const responses: string[] = [];
  const req = async (method: string, pathname: string, body?: unknown) => {
    const answer = await admin.request(method, pathname, body);
    responses.push(JSON.stringify(answer.body));
    return answer;
  };
  const chat = async (body: Record<string, unknown>) => {
    const answer = await admin.stream(body);
    const reply = tokensOf(answer.events);
    responses.push(reply);
    return reply;
  };

  await t.test('a new user: register the everything server, list its tools, mount it, ask', async (t) => {
    const server = await req('POST', '/mcp-servers', { name: 'Everything', transport_type: 'stdio', connection_config: everythingStdio() });
    t.equal(server.status, 201, 'the server is registered');
    const listed = await req('POST', `/mcp-servers/${server.body.mcp_server_id}/test-call`, { action: 'tools/list' });
    const names = listed.body.tools.map((tool: { name: string }) => tool.name);
    t.ok(names.includes('echo') && names.includes('get-sum'), `test-call lists its tools (${names.length})`);
    const agent = await req('POST', '/agents', {
      name: 'Echo desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'fixture-model',
    });
    const mount = await req('POST', `/agents/${agent.body.agent_id}/mcp-mounts`, { mcp_server_id: server.body.mcp_server_id, allowed_tools: ['echo'] });
    t.equal(mount.status, 201, 'mounted');
    selection = { selected_tool_name: 'echo', should_call_now: true, missing_required_arguments: [], reason: 'the user wants an echo' };
    args = { message: 'hello from MCP' };
    const reply = await chat({ thread_id: 'e2e-echo', agent_id: agent.body.agent_id, message: 'Please echo "hello from MCP"' });
    t.equal(reply, 'The tool says: Echo: hello from MCP', 'the answer comes from the tool');

    const offline = await req('POST', '/agents', {
      name: 'Offline echo',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      mcp_response_config: {
        quick_match_rules: [{ prefix: '/echo', mcp_server_id: server.body.mcp_server_id, tool_name: 'echo', suffix_parameter_name: 'message' }],
      },
    });
    await req('POST', `/agents/${offline.body.agent_id}/mcp-mounts`, { mcp_server_id: server.body.mcp_server_id, allowed_tools: ['echo'] });
    t.equal(
      await chat({ thread_id: 'e2e-offline', agent_id: offline.body.agent_id, message: '/echo hi there' }),
      '"Echo: hi there"',
      'on the offline default a quick-match command answers from the tool',
    );
  });

  await t.test('a secret_payload value never appears in a response, audit row, stored turn or log line', async (t) => {
    const credential = await req('POST', '/mcp-credentials', { name: 'Demo key', secret_payload: { api_key: SECRET } });
    t.equal(credential.status, 201);
    const config = { ...everythingStdio(), env: { DEMO_API_KEY: '<API_KEY>' } };
    const server = await req('POST', '/mcp-servers', {
      name: 'Everything with a key',
      transport_type: 'stdio',
      connection_config: config,
      credential_id: credential.body.credential_id,
    });
    const id = server.body.mcp_server_id;
    await req('POST', `/mcp-servers/${id}/health-check`);
    const env = await req('POST', `/mcp-servers/${id}/test-call`, { action: 'tools/call', tool_name: 'get-env' });
    t.equal(env.body.status, 'success', 'the server ran with the secret in its environment');
    t.equal(env.body.result.DEMO_API_KEY, '***', 'and the value it echoed is masked in the answer');

    const agent = await req('POST', '/agents', {
      name: 'Env desk',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'fixture-model',
      mcp_response_config: { quick_match_rules: [{ prefix: '/env', mcp_server_id: id, tool_name: 'get-env', suffix_parameter_name: 'filter' }] },
    });
    await req('POST', `/agents/${agent.body.agent_id}/mcp-mounts`, { mcp_server_id: id, allowed_tools: ['get-env'] });
    await req('POST', `/agents/${agent.body.agent_id}/mcp-response-preview`, { mcp_server_id: id, tool_name: 'get-env' });
    selection = { selected_tool_name: 'get-env', should_call_now: true, missing_required_arguments: [], reason: 'env' };
    args = {};
    const reply = await chat({ thread_id: 'e2e-env', agent_id: agent.body.agent_id, message: 'Show me the environment' });
    t.match(reply, 'The tool says:', 'the model answered from the tool result');
    await chat({ thread_id: 'e2e-env', agent_id: agent.body.agent_id, message: '/env all' });
    await req('GET', '/sessions/e2e-env/mcp-calls');
    await req('GET', `/agents/${agent.body.agent_id}/mcp-calls`);
    const turns = await req('GET', '/sessions/e2e-env/turns');
    for (const turn of turns.body.items) await req('GET', `/sessions/e2e-env/turns/${turn.turn_id}/context`);
    await req('POST', `/mcp-credentials/${credential.body.credential_id}/rotate`, { secret_payload: { api_key: `${SECRET}-rotated` } });
    await req('GET', `/mcp-credentials/${credential.body.credential_id}`);

    t.ok(
      model.bodies.some((b) => JSON.stringify(b).includes('DEMO_API_KEY')),
      'the model saw the tool result',
    );
    t.notOk(
      model.bodies.some((b) => JSON.stringify(b).includes(SECRET)),
      'but never the secret',
    );
    t.notOk(
      responses.some((text) => text.includes(SECRET)),
      'no response carries the secret',
    );
    const tables = ['admin_action_audits', 'mcp_call_audits', 'turn_context_snapshots', 'chat_messages', 'mcp_servers', 'mcp_credentials'];
    for (const table of tables) {
      const [row] = await query<{ n: number }>(databaseUrl, `SELECT count(*)::int AS n FROM ${table} t WHERE t::text LIKE $1`, [`%${SECRET}%`]);
      t.equal(row?.n, 0, `no ${table} row holds the secret`);
    }
    const [calls] = await query<{ n: number }>(
      databaseUrl,
      "SELECT count(*)::int AS n FROM mcp_call_audits WHERE tool_name = 'get-env' AND status = 'success'",
    );
    t.ok((calls?.n ?? 0) >= 3, 'the calls were audited');
    run.child.kill('SIGTERM');
    t.equal((await run.exit).code, 0, 'the host stops cleanly');
    const output = run.output();
    t.match(output, /"level":20/, 'debug lines were logged');
    t.notOk(output.includes(SECRET), 'no log line carries the secret');
  });
});
