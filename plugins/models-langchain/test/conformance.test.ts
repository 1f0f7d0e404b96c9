// The model providers of the models-langchain plugin keep every rule of the model provider conformance suite
// (@agent-host/sdk/testing): openai, anthropic and ollama against fixtures speaking their wire protocols, offline as
// it is. Providers come from the plugin's real register/init.
import { modelProviderConformance } from '@agent-host/sdk/testing';
import t from 'tap';
import { startAnthropicFixture } from '../../../test/fixtures/anthropic-server.js';
import { startOllamaFixture } from '../../../test/fixtures/ollama-server.js';
import { startOpenAiFixture } from '../../../test/fixtures/openai-server.js';
import { providersFromPlugin, setEnvFor, specFor, startedFixture } from '../../../test/helpers/model-provider.js';

t.test('every provider of models-langchain keeps every rule', async (t) => {
  const answer = () => ({ content: 'Parcels ship within two days.' });
  const openai = await startedFixture(t, startOpenAiFixture, answer);
  const anthropic = await startedFixture(t, startAnthropicFixture, answer);
  const ollama = await startedFixture(t, startOllamaFixture, answer);
  setEnvFor(t, { TEST_CONFORMANCE_OPENAI_KEY: 'sk-fixture', TEST_CONFORMANCE_ANTHROPIC_KEY: 'sk-ant-fixture' });
  const providers = await providersFromPlugin({
    openai_base_url: openai.url,
    openai_api_key_env: 'TEST_CONFORMANCE_OPENAI_KEY',
    anthropic_base_url: anthropic.url,
    anthropic_api_key_env: 'TEST_CONFORMANCE_ANTHROPIC_KEY',
    ollama_base_url: ollama.url,
  });
  t.same([...providers.keys()].sort(), ['anthropic', 'offline', 'ollama', 'openai'], 'the plugin registers four providers');
  for (const [key, model] of [
    ['openai', 'gpt-4o-mini'],
    ['anthropic', 'claude-sonnet-4-5'],
    ['ollama', 'llama3.2'],
    ['offline', 'offline-default'],
  ] as const) {
    await t.test(key, async (t) => {
      for (const rule of modelProviderConformance(providers.get(key)!, specFor(model)())) await t.test(rule.rule, async () => rule.check());
    });
  }
});
