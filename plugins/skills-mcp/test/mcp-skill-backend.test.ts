// skills-mcp: the `mcp` skill backend as the kernel loads it, its config
// rules, and one invocation running a tool of the everything server through
// the tools handle core would hand it.
import { extensionPoints, type SkillBackend, type ToolHandle } from '@agent-host/sdk';
import t from 'tap';
import { toolArguments } from '../src/lib/mcp-skill-backend.js';
import { backendFor, everythingStdio, server } from '../../../test/fixtures/mcp/clients.js';
import { contributesOf, loadFirstPartyPlugin } from '../../../test/helpers/first-party-plugin.js';

async function mcpBackend(): Promise<SkillBackend> {
  const kernel = await loadFirstPartyPlugin('skills-mcp');
  return kernel.registry(extensionPoints.skillBackends).get('mcp')!;
}

t.test('the plugin registers the mcp skill backend its manifest declares', async (t) => {
  const kernel = await loadFirstPartyPlugin('skills-mcp');
  const registry = kernel.registry(extensionPoints.skillBackends);
  t.same(
    registry.list().map((e) => [e.key, e.owner]),
    [['mcp', 'skills-mcp']],
  );
  t.same(kernel.plugins()[0]!.registered, { skillBackends: (await contributesOf('skills-mcp')).skillBackends }, 'what it registers is what the manifest says');
});

t.test('config: tool_name is required, arguments and query_argument are optional, nothing else is accepted', async (t) => {
  const backend = await mcpBackend();
  t.same(backend.validateConfig({ tool_name: 'echo' }), [], 'a tool name is enough');
  t.same(
    backend.validateConfig({ tool_name: 'echo', arguments: { lang: 'en' }, query_argument: 'message' }),
    [],
    'with fixed arguments and the query argument',
  );
  const missing = backend.validateConfig({});
  t.same(
    missing.map((i) => i.loc),
    [['config', 'tool_name']],
    'a missing tool name is reported at config.tool_name',
  );
  t.match(missing[0]!.msg, /tool_name is required/);
  t.same(
    backend.validateConfig({ tool_name: '  ' }).map((i) => i.loc),
    [['config', 'tool_name']],
    'a blank tool name counts as missing',
  );
  t.same(
    backend.validateConfig({ tool_name: 'echo', tool: 'x' }).map((i) => i.type),
    ['unrecognized_keys'],
    'an unknown key (a typo) is refused',
  );
  t.same(
    backend.validateConfig({ tool_name: 'echo', arguments: [] }).map((i) => i.loc),
    [['config', 'arguments']],
    'arguments is an object',
  );
});

t.test('the tool arguments: fixed ones, with the query under query_argument', async (t) => {
  t.same(toolArguments({ tool_name: 'x', arguments: { a: 1 }, query_argument: 'q' }, { query: 'hi' }), { a: 1, q: 'hi' });
  t.same(toolArguments({ tool_name: 'x', arguments: { q: 'fixed' }, query_argument: 'q' }, { query: 'hi' }), { q: 'hi' }, 'the query wins over a fixed value');
  t.same(
    toolArguments({ tool_name: 'x', arguments: { a: 1 }, query_argument: null }, { query: 'hi' }),
    { a: 1 },
    'without query_argument the query is not sent',
  );
});

t.test('an invocation calls tool_name through the tools handle; without one it is an error', async (t) => {
  const backend = await mcpBackend();
  const tools = await backendFor(t, 'stdio');
  const everything = server('stdio', everythingStdio());
  const handle: ToolHandle = {
    list: () => tools.listTools(everything, { timeoutMs: 15_000 }),
    call: (name, args) => tools.callTool(everything, name, args, { timeoutMs: 15_000 }),
  };
  const invocation = { skill_version_id: 'v1', backend_ref_id: 'srv-1', config: { tool_name: 'echo', query_argument: 'message' }, input: { query: 'ping' } };
  t.same(
    await backend.invoke({ ...invocation, tools: handle }, { timeoutMs: 15_000 }),
    { status: 'success', result: 'Echo: ping' },
    'the everything server echoes the query',
  );
  t.match(await backend.invoke(invocation, { timeoutMs: 15_000 }), { status: 'error', error: /no MCP server was handed/ });
});
