// The tools-mcp plugin as its package entry boots: its manifest, its config section, the two tool backends it
// registers, and its stop hook ending the stdio children it started.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import toolsMcp from '@agent-host/plugin-tools-mcp';
import { coreServices, extensionPoints, PluginRefusedError, type PluginManifest } from '@agent-host/sdk';
import { startTestKernel } from '@agent-host/sdk/testing';
import t from 'tap';
import { createHttpClient } from '../../../core/src/services/http-client.js';
import { goneWithin, processExists, server, trackingStdio, whoami } from '../../../test/fixtures/mcp/clients.js';

const manifest = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@agent-host/plugin-tools-mcp/package.json'), 'utf8'))
  .agentHost as PluginManifest;

const boot = (config: Record<string, unknown> = {}) =>
  startTestKernel({
    plugins: [toolsMcp],
    manifests: [manifest],
    config: { 'tools-mcp': config },
    hostConfig: { server: { host: '127.0.0.1' } },
    services: [[coreServices.http, createHttpClient(5_000, { allowedPrivateHosts: [], maxResponseBytes: 1024, maxRedirects: 0 })]],
  });

t.test('the plugin registers the stdio and http_sse tool backends its manifest declares', async (t) => {
  const kernel = await boot();
  t.same(kernel.keys(extensionPoints.toolBackends), manifest.contributes!.toolBackends, 'both keys are registered, as the manifest says');
  t.same(kernel.get(extensionPoints.toolBackends, 'stdio').validateConfig({ command: 'node' }), [], 'the stdio key holds the stdio backend');
  t.same(kernel.get(extensionPoints.toolBackends, 'http_sse').validateConfig({ url: 'https://x/mcp' }), [], 'the http_sse key holds the http_sse backend');
  t.match(kernel.logs, [{ level: 'warn', msg: /stdio MCP servers may run this host's Node executable and npx/ }], 'the development default is a warning');
  await kernel.stop();
});

t.test('a bad [plugins.tools-mcp] section refuses start-up naming the key', async (t) => {
  for (const [config, key] of [
    [{ max_connections: 0 }, 'max_connections'],
    [{ idle_timeout_ms: -1 }, 'idle_timeout_ms'],
    [{ default_timeout_ms: 'soon' }, 'default_timeout_ms'],
    [{ idle_timeout: 5 }, 'idle_timeout'],
  ] as const) {
    const error = await boot(config).catch((e: unknown) => e);
    t.type(error, PluginRefusedError, 'start-up is refused');
    t.match((error as Error).message, new RegExp(`plugin "tools-mcp" refused \\(invalid_config\\).*${key}`), `${key} is named`);
  }
});

t.test('the configured default timeout applies to a call that brings no timeout of its own', async (t) => {
  const kernel = await boot({ default_timeout_ms: 300 });
  t.teardown(() => kernel.stop());
  const outcome = await kernel
    .get(extensionPoints.toolBackends, 'stdio')
    .callTool(server('stdio', trackingStdio()), 'slow', { ms: 10_000 }, { timeoutMs: Number.NaN });
  t.same(outcome, { status: 'timeout', result: null, error: 'tools/call slow timed out after 300 ms' }, 'the call times out after default_timeout_ms');
});

t.test('stopping the host ends every stdio child the plugin started', async (t) => {
  const kernel = await boot({ shutdown_grace_ms: 300 });
  const { pid } = await whoami(kernel.get(extensionPoints.toolBackends, 'stdio'), server('stdio', trackingStdio()));
  t.ok(processExists(pid), 'the child runs while the host runs');
  await kernel.stop();
  t.ok(await goneWithin(pid, 0), 'gone, and reaped, once stop returns');
});
