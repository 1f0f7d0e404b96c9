import { listOrchestrators } from '@agent-host/core';
import { extensionPoints } from '@agent-host/sdk';
import { z } from 'zod';
import { route, type RouteFactory } from './route.js';

const orchestrators = z.object({
  default_orchestrator_key: z.string(),
  items: z.array(
    z.object({
      key: z.string(),
      display_name: z.string(),
      description: z.string(),
      experimental: z.boolean(),
      is_default: z.boolean(),
      plugin_id: z.string().describe('The plugin that registered it'),
    }),
  ),
});

export const chatOrchestratorRoutes: RouteFactory = (_domains, app) => [
  route({
    method: 'get',
    path: '/chat-orchestrators',
    // Spec 5.6 does not list it among the public routes; the console asks after login, like every agent setting.
    access: { login: true },
    summary: 'Registered chat runtimes for agent configuration dropdowns',
    success: { status: 200, description: 'The runtimes and the default', schema: orchestrators },
    handler: async () => listOrchestrators(app.kernel.registry(extensionPoints.orchestrators), app.config.agent.default_orchestrator_key),
  }),
];
