import { definePlugin, extensionPoints } from '@agent-host/sdk';
import { McpSkillBackend } from './lib/mcp-skill-backend.js';

/**
 * Registers the `mcp` skill backend. It reaches the MCP server only through
 * the `tools` handle core puts in each invocation, so the server's credential,
 * the mount's `tool_allowlist` and the timeout stay core's to enforce.
 */
export default definePlugin({
  id: 'skills-mcp',
  sdk: '^1.5.0',
  register(env) {
    env.registerInit({
      deps: { skills: extensionPoints.skillBackends },
      async init({ skills }) {
        skills.register('mcp', new McpSkillBackend());
      },
    });
  },
});
