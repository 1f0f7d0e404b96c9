// The tools-mcp backends keep every rule of the tool backend conformance suite (@agent-host/sdk/testing): stdio
// against the tracking fixture server, http_sse against the HTTP fixture over Streamable HTTP and SSE.
import { toolBackendConformance } from '@agent-host/sdk/testing';
import t from 'tap';
import { backendFor, server, trackingStdio } from '../../../test/fixtures/mcp/clients.js';
import { startMcpHttpFixture } from '../../../test/fixtures/mcp/http-server.js';

const tools = { tool: { name: 'whoami', args: {} }, slowTool: { name: 'slow', args: { ms: 5_000 } } };

t.test('stdio: every rule holds', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const sample = { ...tools, server: server('stdio', trackingStdio()), invalidConfig: { command: '', args: 'not a list' } };
  for (const rule of toolBackendConformance(backend, sample)) await t.test(rule.rule, async () => rule.check());
});

for (const [wire, path] of [
  ['streamable_http', '/mcp'],
  ['sse', '/sse'],
] as const) {
  t.test(`http_sse over ${wire}: every rule holds`, async (t) => {
    const fixture = await startMcpHttpFixture();
    t.teardown(() => fixture.close());
    const backend = await backendFor(t, 'http_sse');
    const sample = { ...tools, server: server('http_sse', { url: `${fixture.url}${path}` }), invalidConfig: { url: 'not a url' } };
    for (const rule of toolBackendConformance(backend, sample)) await t.test(rule.rule, async () => rule.check());
  });
}
