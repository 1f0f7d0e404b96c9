import { definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { MapperRuntime } from './lib/mapper-runtime.js';

const config = z
  .object({
    use_model: z
      .boolean()
      .default(true)
      .describe('Ask the agent’s model for the column plan; false (or an answer that is not a usable plan) matches columns by names and value types.'),
  })
  .strict();

export default definePlugin({
  id: 'etl-mapper',
  sdk: '^1.12.0',
  config,
  register(env) {
    env.registerInit({
      deps: { etlRuntimes: extensionPoints.etlRuntimes },
      async init({ etlRuntimes }, options) {
        etlRuntimes.register('etl_mapper', new MapperRuntime(options.use_model));
      },
    });
  },
});
