// The tools-mcp plugin as the kernel loads it: its manifest, its config
// section, the two tool backends it registers, and its stop hook ending the
// stdio children it started.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRootLogger, Kernel } from '@agent-host/core';
import { extensionPoints, PluginRefusedError, type ToolBackend } from '@agent-host/sdk';
import t from 'tap';
import { container } from 'tsyringe';
import type { McpToolBackend } from '../../plugins/tools-mcp/src/lib/mcp-backend.js';
import { createHttpClient } from '../../core/src/services/http-client.js';
import { goneWithin, processExists, ROOT, server, trackingStdio, whoami } from '../fixtures/mcp/clients.js';

function kernel(config: Record<string, unknown> = {}) {
  const logger = createRootLogger('silent');
  return new Kernel({
    container: container.createChildContainer(),
    logger,
    specifiers: ['tools-mcp'],
    disabled: [],
    pluginsDir: path.join(ROOT, 'plugins'),
    baseDir: ROOT,
    pluginConfig: () => config,
    scopedServices: {
      'core.logger': () => logger,
      'core.config': () => ({ appEnv: 'test', section: (name: string) => (name === 'server' ? { host: '127.0.0.1' } : undefined) }),
      'core.http': () => createHttpClient(5_000, { allowedPrivateHosts: [], maxResponseBytes: 1024, maxRedirects: 0 }),
    },
  });
}

t.test('the plugin registers the stdio and http_sse tool backends its manifest declares', async (t) => {
  const k = kernel();
  await k.init();
  const registry = k.registry(extensionPoints.toolBackends);
  t.same(registry.list().map((e) => [e.key, e.owner]), [['stdio', 'tools-mcp'], ['http_sse', 'tools-mcp']], 'both keys are registered, owned by tools-mcp');
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'plugins', 'tools-mcp', 'package.json'), 'utf8'));
  t.same(k.plugins()[0]!.registered, { toolBackends: manifest.agentHost.contributes.toolBackends }, 'what it registers is what the manifest says');
  t.same(registry.get('stdio')!.validateConfig({ command: 'node' }), [], 'the stdio key holds the stdio backend');
  t.same(registry.get('http_sse')!.validateConfig({ url: 'https://x/mcp' }), [], 'the http_sse key holds the http_sse backend');
  await k.start();
  await k.stop();
});

t.test('a bad [plugins.tools-mcp] section refuses start-up naming the key', async (t) => {
  for (const [config, key] of [
    [{ max_connections: 0 }, 'max_connections'],
    [{ idle_timeout_ms: -1 }, 'idle_timeout_ms'],
    [{ default_timeout_ms: 'soon' }, 'default_timeout_ms'],
    [{ idle_timeout: 5 }, 'idle_timeout'],
  ] as const) {
    const error = await kernel(config).init().catch((e: unknown) => e);
    t.type(error, PluginRefusedError, 'start-up is refused');
    t.match((error as Error).message, new RegExp(`plugin "tools-mcp" refused \\(invalid_config\\).*${key}`), `${key} is named`);
  }
});

t.test('the configured default timeout applies to a call that brings no timeout of its own', async (t) => {
  const k = kernel({ default_timeout_ms: 300 });
  await k.init();
  await k.start();
  t.teardown(() => k.stop());
  const stdio = k.registry(extensionPoints.toolBackends).get('stdio')!;
  const outcome = await stdio.callTool(server('stdio', trackingStdio()), 'slow', { ms: 10_000 }, { timeoutMs: Number.NaN });
  t.same(outcome, { status: 'timeout', result: null, error: 'tools/call slow timed out after 300 ms' }, 'the call times out after default_timeout_ms');
});

t.test('stopping the host ends every stdio child the plugin started', async (t) => {
  const k = kernel({ shutdown_grace_ms: 300 });
  await k.init();
  await k.start();
  const stdio = k.registry(extensionPoints.toolBackends).get('stdio') as ToolBackend as McpToolBackend;
  const { pid } = await whoami(stdio, server('stdio', trackingStdio()));
  t.ok(processExists(pid), 'the child runs while the host runs');
  await k.stop();
  t.ok(await goneWithin(pid, 0), 'gone, and reaped, once stop returns');
});
