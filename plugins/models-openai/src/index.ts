import { catalogApiKey, coreServices, definePlugin, extensionPoints, z } from '@agent-host/sdk';
import { OpenAiSdkProvider } from './lib/openai-sdk-provider.js';

const config = z
  .object({
    base_url: z
      .string()
      .url()
      .optional()
      .describe(
        "Base URL of the OpenAI-compatible API (OpenAI, vLLM, Ollama's or LM Studio's `/v1`, an Azure OpenAI endpoint); unset, `OPENAI_BASE_URL`, else `https://api.openai.com/v1`, as the openai SDK reads them. A catalog entry's `options.base_url` overrides it per model.",
      ),
    api_key_env: z
      .string()
      .min(1)
      .default('OPENAI_API_KEY')
      .describe(
        "Name of the environment variable holding the API key (the key itself never sits in config files); a catalog entry's `options.api_key_encrypted` or `options.api_key_env` overrides it per model.",
      ),
  })
  .strict();

export default definePlugin({
  id: 'models-openai',
  sdk: '^1.15.0',
  config,
  register(env) {
    env.registerInit({
      deps: { providers: extensionPoints.modelProviders, log: coreServices.logger, secrets: coreServices.secrets, http: coreServices.http },
      async init({ providers, log, secrets, http }, options) {
        providers.register(
          'openai',
          new OpenAiSdkProvider({
            // Below its own key, the base URL the openai SDK itself would read.
            baseUrl: options.base_url ?? (process.env.OPENAI_BASE_URL?.trim() || 'https://api.openai.com/v1'),
            apiKey: (spec) => catalogApiKey(spec, secrets, options.api_key_env),
            apiKeyEnv: options.api_key_env,
            http,
            log,
          }),
        );
      },
    });
  },
});
