// The `openai` model provider of models-langchain against an OpenAI-compatible fixture server speaking the real wire
// protocol (a host using an encrypted key made by the CLI: test/integration/model-secrets-cli.test.ts). models-openai
// replaces it while enabled; both pass the same cases (test/helpers/openai-provider-contract.ts).
import t from 'tap';
import type { ChatModel } from '@agent-host/sdk';
import { OpenAiCompatibleProvider } from '../src/lib/openai-provider.js';
import { providersFromPlugin } from '../../../test/helpers/model-provider.js';
import { openAiProviderContract } from '../../../test/helpers/openai-provider-contract.js';

openAiProviderContract(t, {
  providerAt: (options) => new OpenAiCompatibleProvider(options),
  provider: async (baseUrl, keyEnv, deps) =>
    (await providersFromPlugin({ openai_base_url: baseUrl, ...(keyEnv && { openai_api_key_env: keyEnv }) }, deps)).get('openai')!,
  cacheKeys: (provider) => [...(provider as unknown as { models: Map<string, ChatModel> }).models.keys()],
});
