import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { McpToolBackend } from './lib/mcp-backend.js';

const config = z
  .object({
    /** How long an unused connection (and its stdio child process) stays open for the next call; 0 closes it after each call. */
    idle_timeout_ms: z.number().int().min(0).default(60_000),
    /** Timeout of a call whose caller passes none; every call has one. */
    default_timeout_ms: z.number().int().positive().default(30_000),
    /** Connections kept open per transport; past it, the least recently used idle one closes, or a call gets a one-off connection. */
    max_connections: z.number().int().positive().default(16),
    /** stdio: how long a server may take to exit after its stdin closes, and again after SIGTERM, before SIGKILL. */
    shutdown_grace_ms: z.number().int().positive().default(2_000),
  })
  .strict();

export default definePlugin({
  id: 'tools-mcp',
  sdk: '^1.0.0',
  config,
  register(env) {
    env.registerInit({
      deps: { tools: extensionPoints.toolBackends, lifecycle: coreServices.lifecycle, log: coreServices.logger },
      async init({ tools, lifecycle, log }, options) {
        const backends = (['stdio', 'http_sse'] as const).map(
          (transport) =>
            new McpToolBackend({
              transport,
              idleTimeoutMs: options.idle_timeout_ms,
              defaultTimeoutMs: options.default_timeout_ms,
              maxConnections: options.max_connections,
              shutdownGraceMs: options.shutdown_grace_ms,
              log: log.child({ transport }),
            }),
        );
        for (const backend of backends) tools.register(backend.transport, backend);
        lifecycle.onStop(async () => {
          await Promise.all(backends.map((backend) => backend.close()));
        });
      },
    });
  },
});
