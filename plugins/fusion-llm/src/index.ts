import { definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { LlmFusionRuntime } from './lib/llm-fusion-runtime.js';

const config = z
  .object({
    max_input_characters: z
      .number()
      .int()
      .min(1000)
      .default(200_000)
      .describe('Characters of one input (a text, or the text of a file) sent to the model; a longer one fails the run rather than being cut silently.'),
  })
  .strict();

export default definePlugin({
  id: 'fusion-llm',
  sdk: '^1.12.0',
  config,
  register(env) {
    env.registerInit({
      deps: { fusionRuntimes: extensionPoints.fusionRuntimes },
      async init({ fusionRuntimes }, options) {
        fusionRuntimes.register('fusion_llm', new LlmFusionRuntime(options.max_input_characters));
      },
    });
  },
});
