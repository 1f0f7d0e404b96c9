// Tool providers (issue 14, item 4) reach the MCP pipeline through one adapter, the backend of transport
// `tool_provider`: it must keep every tool backend rule whatever the provider does (hang, throw, ignore its signal),
// because core's pipeline relies on those rules for its limits and audits.
import type { ToolProvider, ToolServerConnection } from '@agent-host/sdk';
import { KeyedRegistry } from '@agent-host/sdk/kernel';
import { toolBackendConformance } from '@agent-host/sdk/testing';
import t from 'tap';
import { TOOL_PROVIDER_TRANSPORT, toolProviderBackend } from '../../core/src/mcp/providers/tool-provider-backend.js';

/** A provider that never looks at its deadline or signal, and throws for what it does not know. */
const careless: ToolProvider = {
  displayName: 'Weather',
  listTools: async () => [
    { name: 'forecast', description: 'The forecast for a city.', input_schema: { type: 'object', required: ['city'] } },
    { name: 'slow_forecast', description: 'Takes its time.', input_schema: { type: 'object' } },
  ],
  callTool: async (name, args) => {
    if (name === 'forecast') return { status: 'success', result: { city: args.city, sky: 'clear' } };
    if (name === 'slow_forecast') return new Promise(() => undefined);
    throw new Error(`no tool ${name}`);
  },
};

const registry = () => {
  const providers = new KeyedRegistry<ToolProvider>('tool providers');
  providers.forPlugin('acme-weather', { onRegister: () => undefined }).register('weather', careless);
  return providers;
};
const server = (provider: string): ToolServerConnection => ({
  server_id: 's-1',
  transport_type: TOOL_PROVIDER_TRANSPORT,
  connection_config: { provider },
  secret: null,
});

t.test('the adapter keeps every tool backend rule for a provider that ignores deadlines and throws', async (t) => {
  const rules = toolBackendConformance(toolProviderBackend(registry()), {
    server: server('weather'),
    tool: { name: 'forecast', args: { city: 'Oslo' } },
    slowTool: { name: 'slow_forecast', args: {} },
    invalidConfig: { provider: 'no-such-provider' },
  });
  for (const rule of rules) await t.test(rule.rule, () => rule.check());
});

t.test('what the adapter answers for a provider that throws, hangs, or is not enabled', async (t) => {
  const backend = toolProviderBackend(registry());
  t.same(await backend.callTool(server('weather'), 'radar', {}, { timeoutMs: 1_000 }), { status: 'error', result: null, error: 'no tool radar' });
  t.same(await backend.callTool(server('weather'), 'slow_forecast', {}, { timeoutMs: 100 }), {
    status: 'timeout',
    result: null,
    error: 'tools/call slow_forecast timed out after 100 ms',
  });
  const gone = new AbortController();
  setTimeout(() => gone.abort(), 50);
  t.match(await backend.callTool(server('weather'), 'slow_forecast', {}, { timeoutMs: 5_000, signal: gone.signal }), {
    status: 'error',
    error: 'tools/call slow_forecast was cancelled',
  });
  t.match(await backend.callTool(server('tides'), 'forecast', {}, { timeoutMs: 1_000 }), {
    status: 'error',
    error: 'tool provider "tides" is not enabled on this host',
  });
  t.same(await backend.healthCheck(server('tides'), { timeoutMs: 1_000 }), { ok: false, message: 'tool provider "tides" is not enabled on this host' });
  t.same(await backend.healthCheck(server('weather'), { timeoutMs: 1_000 }), { ok: true, message: '2 tools' });
  t.same(backend.validateConfig({}), [
    { loc: ['connection_config', 'provider'], msg: 'names the tool provider (a key of an enabled plugin)', type: 'missing' },
  ]);
});
