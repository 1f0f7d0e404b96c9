import { definePlugin, extensionPoints } from '@agent-host/sdk';
import { CoreChatOrchestrator } from './lib/core-chat.js';

export default definePlugin({
  id: 'orchestrator-core-chat',
  sdk: '^1.0.0',
  register(env) {
    env.registerInit({
      deps: { orchestrators: extensionPoints.orchestrators },
      async init({ orchestrators }) {
        orchestrators.register('core_chat_v1', new CoreChatOrchestrator());
      },
    });
  },
});
