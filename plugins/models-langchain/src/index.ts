import { catalogApiKey, coreServices, definePlugin, extensionPoints, z, type ChatModelSpec } from '@agent-host/sdk';
import { ANTHROPIC_DEFAULT_BASE_URL, AnthropicProvider } from './lib/anthropic-provider.js';
import { OfflineModelProvider } from './lib/offline-provider.js';
import { OLLAMA_DEFAULT_BASE_URL, OllamaProvider } from './lib/ollama-provider.js';
import { OpenAiCompatibleProvider } from './lib/openai-provider.js';

const config = z
  .object({
    openai_base_url: z
      .string()
      .url()
      .default('https://api.openai.com/v1')
      .describe("Base URL of the OpenAI-compatible API (vLLM, Ollama, LM Studio, OpenAI); a catalog entry's `options.base_url` overrides it per model."),
    openai_api_key_env: z
      .string()
      .min(1)
      .default('OPENAI_API_KEY')
      .describe(
        "Name of the environment variable holding the API key (the key itself never sits in config files); a catalog entry's `options.api_key_encrypted` or `options.api_key_env` overrides it per model.",
      ),
    anthropic_base_url: z
      .string()
      .url()
      .default(ANTHROPIC_DEFAULT_BASE_URL)
      .describe(
        "Base URL of the Anthropic Messages API (without `/v1`) for the `anthropic` model provider; a catalog entry's `options.base_url` overrides it per model.",
      ),
    anthropic_api_key_env: z
      .string()
      .min(1)
      .default('ANTHROPIC_API_KEY')
      .describe('Name of the environment variable holding the Anthropic API key; catalog entries override it as for `openai`.'),
    ollama_base_url: z
      .string()
      .url()
      .default(OLLAMA_DEFAULT_BASE_URL)
      .describe(
        "Base URL of the Ollama server (native `/api/chat`) for the `ollama` model provider; a catalog entry's `options.base_url` overrides it per model.",
      ),
  })
  .strict();

export default definePlugin({
  id: 'models-langchain',
  sdk: '^1.14.0',
  config,
  register(env) {
    env.registerInit({
      deps: { providers: extensionPoints.modelProviders, log: coreServices.logger, secrets: coreServices.secrets, http: coreServices.http },
      async init({ providers, log, secrets, http }, options) {
        const keyFor = (defaultEnv: string) => (spec: ChatModelSpec) => catalogApiKey(spec, secrets, defaultEnv);
        // A default: models-openai, on the openai SDK alone, serves `openai` instead while it is enabled.
        providers.register(
          'openai',
          new OpenAiCompatibleProvider({
            baseUrl: options.openai_base_url,
            apiKey: keyFor(options.openai_api_key_env),
            apiKeyEnv: options.openai_api_key_env,
            http,
            log,
          }),
          { replaceable: true },
        );
        providers.register(
          'anthropic',
          new AnthropicProvider({
            baseUrl: options.anthropic_base_url,
            apiKey: keyFor(options.anthropic_api_key_env),
            apiKeyEnv: options.anthropic_api_key_env,
            http,
            log,
          }),
        );
        providers.register('ollama', new OllamaProvider({ baseUrl: options.ollama_base_url, http, log }));
        providers.register('offline', new OfflineModelProvider());
      },
    });
  },
});
