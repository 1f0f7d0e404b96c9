import { coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { OfflineModelProvider } from './lib/offline-provider.js';
import { OpenAiCompatibleProvider } from './lib/openai-provider.js';

const config = z
  .object({
    /** Base URL of the OpenAI-compatible API; a catalog entry's `options.base_url` overrides it per model. */
    openai_base_url: z.string().url().default('https://api.openai.com/v1'),
    /** Name of the environment variable holding the API key (the key itself never sits in config files). */
    openai_api_key_env: z.string().min(1).default('OPENAI_API_KEY'),
  })
  .strict();

export default definePlugin({
  id: 'models-langchain',
  sdk: '^1.0.0',
  config,
  register(env) {
    env.registerInit({
      deps: { providers: extensionPoints.modelProviders, log: coreServices.logger },
      async init({ providers, log }, options) {
        providers.register(
          'openai',
          new OpenAiCompatibleProvider({
            baseUrl: options.openai_base_url,
            apiKey: () => process.env[options.openai_api_key_env],
            log,
          }),
        );
        providers.register('offline', new OfflineModelProvider());
      },
    });
  },
});
