import { definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { ReactAgentOrchestrator } from './lib/react-agent.js';

const config = z
  .object({
    max_steps: z.number().int().min(1).max(20).default(5).describe('Model calls per turn before the ReAct agent must answer.'),
  })
  .strict();

export default definePlugin({
  id: 'orchestrator-react-agent',
  sdk: '^1.0.0',
  config,
  register(env) {
    env.registerInit({
      deps: { orchestrators: extensionPoints.orchestrators },
      async init({ orchestrators }, options) {
        orchestrators.register('react_agent_v1', new ReactAgentOrchestrator(options.max_steps));
      },
    });
  },
});
