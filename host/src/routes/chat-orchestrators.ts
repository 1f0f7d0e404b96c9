import { listOrchestrators } from '@agent-host/core';
import { extensionPoints } from '@agent-host/sdk';
import type { RouteFactory } from './route.js';

export const chatOrchestratorRoutes: RouteFactory = (app) => [
  {
    method: 'get',
    path: '/chat-orchestrators',
    // Spec 5.6 does not list it among the public routes; the console asks after login, like every agent setting.
    access: { login: true },
    summary: 'Registered chat runtimes for agent configuration dropdowns',
    handler: async () =>
      listOrchestrators(app.kernel.registry(extensionPoints.orchestrators), app.config.agent.default_orchestrator_key),
  },
];
