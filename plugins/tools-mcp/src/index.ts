import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { McpToolBackend } from './lib/mcp-backend.js';
import { StdioPolicy } from './lib/stdio-policy.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

const config = z
  .object({
    idle_timeout_ms: z
      .number()
      .int()
      .min(0)
      .default(60_000)
      .describe('How long an unused connection (and its stdio child process) stays open for the next call; 0 closes it after each call.'),
    default_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe('Timeout of a tool action whose caller passes none (mounts always pass their `timeout_ms`); every call has one.'),
    max_connections: z
      .number()
      .int()
      .positive()
      .default(16)
      .describe('Connections kept open per transport; past it, the least recently used idle one closes, or a call gets a one-off connection.'),
    shutdown_grace_ms: z
      .number()
      .int()
      .positive()
      .default(2_000)
      .describe('stdio: how long a server may take to exit after its stdin closes, and again after SIGTERM, before SIGKILL.'),
    max_message_bytes: z
      .number()
      .int()
      .positive()
      .default(10 * 1024 * 1024)
      .describe(
        'stdio: the largest message a server may send (a tool result is one message); past it the call fails naming the limit and the server is ended. HTTP servers are held to `[http] max_response_bytes`.',
      ),
  })
  .strict();

export default definePlugin({
  id: 'tools-mcp',
  sdk: '^1.5.0',
  config,
  register(env) {
    env.registerInit({
      deps: {
        tools: extensionPoints.toolBackends,
        lifecycle: coreServices.lifecycle,
        log: coreServices.logger,
        hostConfig: coreServices.config,
        http: coreServices.http,
      },
      async init({ tools, lifecycle, log, hostConfig, http }, options) {
        const stdioPolicy = StdioPolicy.from(hostConfig.section('mcp')?.stdio_allowed_commands, {
          appEnv: hostConfig.appEnv,
          loopback: LOOPBACK.has(String(hostConfig.section('server')?.host ?? '')),
        });
        if (stdioPolicy.isDevelopmentDefault) {
          log.warn(
            "stdio MCP servers may run this host's Node executable and npx with any arguments (the development default); list the allowed commands in [mcp] stdio_allowed_commands",
          );
        }
        const stdioCwd = await mkdtemp(path.join(os.tmpdir(), 'agent-host-mcp-'));
        const backends = (['stdio', 'http_sse'] as const).map(
          (transport) =>
            new McpToolBackend({
              transport,
              idleTimeoutMs: options.idle_timeout_ms,
              defaultTimeoutMs: options.default_timeout_ms,
              maxConnections: options.max_connections,
              shutdownGraceMs: options.shutdown_grace_ms,
              maxMessageBytes: options.max_message_bytes,
              stdioPolicy,
              stdioCwd,
              http,
              log: log.child({ transport }),
            }),
        );
        for (const backend of backends) tools.register(backend.transport, backend);
        lifecycle.onStop(async () => {
          await Promise.all(backends.map((backend) => backend.close()));
          await rm(stdioCwd, { recursive: true, force: true });
        });
      },
    });
  },
});
