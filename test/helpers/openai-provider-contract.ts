// What every `openai` model provider must pass against the OpenAI-compatible fixture (test/fixtures/openai-server.ts):
// the cases of every provider (providerContract), then the OpenAI wire protocol's: usage, tool calls, the conversation's
// shape, structured output, the base URL and API key rules of the catalog, temperature and the deadline.
// models-langchain's provider and models-openai's run them.
import type { ChatModel, ChatModelSpec, HttpClient, Logger, ModelProvider, SecretsService } from '@agent-host/sdk';
import { UpstreamTimeoutError } from '@agent-host/sdk';
import { randomBytes } from 'node:crypto';
import { createSecrets } from '../../core/src/services/secrets.js';
import { startOpenAiFixture, type OpenAiFixture, type OpenAiFixtureOptions } from '../fixtures/openai-server.js';
import { recordingHttp } from './http-client.js';
import {
  collect,
  failureOf,
  providerContract,
  recordingLogger,
  setEnvFor,
  specFor,
  startedFixture,
  streamTokens,
  tokensOf,
  user,
  type Test,
} from './model-provider.js';

/** The OpenAI-compatible fixture with `respond`, closed when `tt` ends. */
export const openAiFixture = (tt: Test, respond?: OpenAiFixtureOptions['respond']): Promise<OpenAiFixture> => startedFixture(tt, startOpenAiFixture, respond);

/** What a provider's class is built with in these tests: the fixture's URL, a fixed key, the client and the logger. */
export interface FixtureProviderOptions {
  baseUrl: string;
  apiKey: () => string;
  http: HttpClient;
  log: Logger;
}

/** A builder of the `gpt-4o-mini` model the provider `providerAt` makes for `server`, with spec overrides. */
export const fixtureModel =
  (providerAt: (options: FixtureProviderOptions) => ModelProvider) =>
  (server: OpenAiFixture, overrides: Partial<ChatModelSpec> = {}, log: Logger = recordingLogger(), http: HttpClient = recordingHttp()): ChatModel =>
    providerAt({ baseUrl: server.url, apiKey: () => 'sk-fixture', http, log }).createChatModel(specFor('gpt-4o-mini')(overrides));

/** One `openai` provider, as the cases drive it. */
export interface OpenAiProviderHarness {
  /** The provider's class, built directly. */
  providerAt(options: FixtureProviderOptions): ModelProvider;
  /** The provider the plugin registers with its base URL set to `baseUrl` and its key variable to `keyEnv` (its default when absent). */
  provider(baseUrl: string, keyEnv?: string, deps?: { secrets?: SecretsService; log?: Logger }): Promise<ModelProvider>;
  /** The keys of the provider's cache of clients, which must never hold a key in clear. */
  cacheKeys(provider: ModelProvider): string[];
}

/** Registers the cases on `t`, the calling test file's tap root: those of every provider (`providerContract`), then OpenAI's. */
export function openAiProviderContract(t: { test(name: string, fn: (tt: any) => Promise<void>): unknown }, h: OpenAiProviderHarness): void {
  const spec = specFor('gpt-4o-mini');
  const fixture = openAiFixture;
  const modelAt = fixtureModel(h.providerAt);

  providerContract(t, {
    fixture,
    modelAt,
    framesBeforeThirdToken: 3, // the role chunk, then one chunk a token
    errorStatuses: [500, 401],
    errorReply: (status, message) => ({ status, error: { message } }),
    checkStreamRequest(tt, server) {
      tt.equal(server.bodies[0]?.stream, true, 'stream() asks the server for an SSE stream');
    },
  });

  t.test('provider-reported usage comes through in stream and invoke', async (tt) => {
    const server = await fixture(tt, () => ({ content: 'Two words', usage: { prompt_tokens: 17, completion_tokens: 4 } }));
    const model = modelAt(server);
    const chunks = await collect(model.stream(user('count me')));
    const usages = chunks.filter((c) => c.type === 'usage');
    tt.same(
      usages,
      [{ type: 'usage', usage: { input_tokens: 17, output_tokens: 4 } }],
      'stream yields exactly one usage chunk with the server-reported counts',
    );
    tt.equal(chunks.at(-1)?.type, 'usage', 'the usage chunk comes after the tokens');
    tt.equal(server.bodies[0]?.stream_options?.include_usage, true, 'a streamed request asks the server to include usage');
    const completion = await model.invoke(user('count me'));
    tt.same(completion.usage, { input_tokens: 17, output_tokens: 4 }, 'invoke returns the server-reported usage');
    tt.equal(completion.content, 'Two words', 'invoke returns the message content');
  });

  t.test('usage is absent when the server reports none', async (tt) => {
    const server = await fixture(tt, () => ({ content: 'no counts here', usage: null }));
    const model = modelAt(server);
    const completion = await model.invoke(user('hello'));
    tt.notOk('usage' in completion, 'invoke leaves usage out when the response carries no usage (core estimates it)');
    const chunks = await collect(model.stream(user('hello')));
    tt.equal(chunks.filter((c) => c.type === 'usage').length, 0, 'stream yields no usage chunk when the server reports none');
    tt.equal(tokensOf(chunks).join(''), 'no counts here', 'the tokens still arrive');
  });

  t.test('tool calls are returned with parsed arguments', async (tt) => {
    const tools = [
      {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] },
      },
    ];
    const server = await fixture(tt, (body) =>
      body.tools
        ? {
            tool_calls: [
              { id: 'call_weather_1', name: 'get_weather', arguments: { city: 'Paris', days: 3 } },
              { id: 'call_weather_2', name: 'get_weather', arguments: { city: 'Oslo, Norway', days: 1 } },
            ],
          }
        : { content: 'no tools offered' },
    );
    const model = modelAt(server);

    const chunks = await collect(model.stream(user('weather in Paris and Oslo?'), { tools }));
    const streamed = chunks.flatMap((c) => (c.type === 'tool_call' ? [c.call] : []));
    tt.same(
      streamed,
      [
        { id: 'call_weather_1', name: 'get_weather', arguments: { city: 'Paris', days: 3 } },
        { id: 'call_weather_2', name: 'get_weather', arguments: { city: 'Oslo, Norway', days: 1 } },
      ],
      'streamed tool-call deltas (id, name, argument fragments) are assembled into calls with parsed arguments',
    );
    tt.equal(tokensOf(chunks).join(''), '', 'a pure tool-call answer streams no text');

    const completion = await model.invoke(user('weather in Paris?'), { tools });
    tt.same(
      completion.tool_calls.map((c) => [c.id, c.name, c.arguments]),
      [
        ['call_weather_1', 'get_weather', { city: 'Paris', days: 3 }],
        ['call_weather_2', 'get_weather', { city: 'Oslo, Norway', days: 1 }],
      ],
      'invoke returns the tool calls with their arguments parsed from the JSON string',
    );

    const sentTools = server.bodies[0]?.tools;
    tt.same(
      sentTools?.map((x: any) => [x.type, x.function.name, x.function.description, x.function.parameters]),
      [['function', 'get_weather', 'Weather for a city', tools[0]!.parameters]],
      'the tool specs are sent as OpenAI function tools with name, description and JSON schema',
    );
    tt.equal(server.bodies.length, 2, 'one request per call');
  });

  t.test('assistant tool calls and tool results are sent back in the conversation', async (tt) => {
    const server = await fixture(tt, () => ({ content: 'It is sunny.' }));
    await modelAt(server).invoke([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_9', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', content: '{"sky":"clear"}', tool_call_id: 'call_9' },
    ]);
    const [, assistant, tool] = server.bodies[0]?.messages ?? [];
    tt.equal(assistant?.tool_calls?.[0]?.id, 'call_9', 'the assistant message carries the tool call id');
    tt.same(JSON.parse(assistant?.tool_calls?.[0]?.function?.arguments ?? 'null'), { city: 'Paris' }, 'tool call arguments go out as a JSON string');
    tt.same(
      [tool?.role, tool?.tool_call_id, tool?.content],
      ['tool', 'call_9', '{"sky":"clear"}'],
      'the tool result goes out as a tool message answering its call',
    );
  });

  t.test('responseSchema sends response_format json_schema', async (tt) => {
    const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false };
    const server = await fixture(tt, (body) =>
      body.response_format?.type === 'json_schema' ? { content: JSON.stringify({ answer: 42 }) } : { content: 'plain prose' },
    );
    const model = modelAt(server);
    const completion = await model.invoke(user('the answer?'), { responseSchema: { name: 'final_answer', schema } });
    const format = server.bodies[0]?.response_format;
    tt.equal(format?.type, 'json_schema', 'invoke sends response_format type json_schema');
    tt.equal(format?.json_schema?.name, 'final_answer', 'the schema name is sent');
    tt.same(format?.json_schema?.schema, schema, 'the schema itself is sent');
    tt.same(JSON.parse(completion.content), { answer: 42 }, 'the JSON text the server answered is returned as content');

    const chunks = await collect(model.stream(user('the answer?'), { responseSchema: { name: 'final_answer', schema } }));
    tt.equal(server.bodies[1]?.response_format?.type, 'json_schema', 'stream sends response_format json_schema too');
    tt.same(JSON.parse(tokensOf(chunks).join('')), { answer: 42 }, 'streamed tokens join into the JSON answer');

    await model.invoke(user('plain'));
    tt.equal(server.bodies[2]?.response_format, undefined, 'no response_format without responseSchema');
  });

  t.test("a catalog entry's options.base_url overrides the plugin's base URL", async (tt) => {
    const pluginDefault = await fixture(tt, () => ({ content: 'from the plugin default' }));
    const catalogTarget = await fixture(tt, () => ({ content: 'from the catalog base_url' }));
    const model = modelAt(pluginDefault, { options: { base_url: catalogTarget.url } });
    const completion = await model.invoke(user('where am I?'));
    tt.equal(completion.content, 'from the catalog base_url', 'the answer comes from the catalog base_url');
    tt.equal(catalogTarget.bodies.length, 1, 'the catalog base_url server received the request');
    tt.equal(pluginDefault.requests.length, 0, "the plugin's base URL received nothing");
    tt.equal(catalogTarget.requests[0]?.path, '/v1/chat/completions', 'the request goes to <base_url>/chat/completions');

    const fallback = modelAt(pluginDefault);
    await fallback.invoke(user('and now?'));
    tt.equal(pluginDefault.bodies.length, 1, "without options.base_url the plugin's base URL is used");
  });

  t.test('the plugin reads the API key from the env var named in config', async (tt) => {
    const server = await fixture(tt, () => ({ content: 'authorised' }));
    const envName = `AGENT_HOST_TEST_MODEL_KEY_${process.pid}`;
    setEnvFor(tt, { [envName]: 'sk-from-named-env', OPENAI_API_KEY: 'sk-from-default-env' });

    const openai = await h.provider(server.url, envName);
    tt.ok(openai, 'the plugin registers the openai provider');
    tt.equal(openai?.offline, false, 'the openai provider is not offline');
    const model = openai!.createChatModel(spec({ model_name: 'fixture-model-1' }));
    tt.equal(model.provider, 'openai', 'the model reports provider openai');
    tt.equal(model.modelName, 'fixture-model-1', 'the model reports the catalog model name');
    await model.invoke(user('who am I?'));
    tt.equal(server.requests[0]?.headers.authorization, 'Bearer sk-from-named-env', 'the Authorization header carries the key from the configured env var');
    tt.equal(server.bodies[0]?.model, 'fixture-model-1', 'the request names the catalog model');

    const defaults = await h.provider(server.url);
    await defaults.createChatModel(spec()).invoke(user('and by default?'));
    tt.equal(server.requests[1]?.headers.authorization, 'Bearer sk-from-default-env', 'without openai_api_key_env the key comes from OPENAI_API_KEY');
  });

  t.test('temperature is sent only when the spec sets one', async (tt) => {
    const server = await fixture(tt);
    await modelAt(server, { temperature: 0.3 }).invoke(user('warm'));
    await modelAt(server, { temperature: null }).invoke(user('default'));
    tt.equal(server.bodies[0]?.temperature, 0.3, 'a set temperature is sent');
    tt.notOk('temperature' in (server.bodies[1] ?? {}), "temperature null leaves the provider's default (not sent)");
  });

  t.test('the model timeout bounds the whole streamed request, not only the headers', async (tt) => {
    const server = await fixture(tt, () => ({ chunks: ['a ', 'b ', 'c ', 'd'], chunkDelayMs: 200 }));
    const model = modelAt(server, { model_name: 'stall', timeoutMs: 300 });
    const seen: string[] = [];
    await tt.rejects(streamTokens(model, user('hi'), seen), UpstreamTimeoutError);
    tt.ok(seen.length < 4, 'the stream is cut before it completes');
  });

  /** The Authorization header of every request `server` received, in order. */
  const authorizations = (server: OpenAiFixture) => server.requests.map((r) => r.headers.authorization);

  /** Per-test names for the key variables, so no real OPENAI_API_KEY is read. */
  const keyEnv = (name: string) => `AGENT_HOST_TEST_${name}_${process.pid}`;

  t.test("a catalog entry's options.api_key_env selects that model's key", async (tt) => {
    const server = await fixture(tt);
    setEnvFor(tt, { [keyEnv('DEFAULT_KEY')]: 'sk-plugin-default', [keyEnv('VLLM_KEY')]: 'sk-vllm' });
    const openai = await h.provider(server.url, keyEnv('DEFAULT_KEY'));
    await openai.createChatModel(spec({ model_name: 'vllm-model', options: { api_key_env: keyEnv('VLLM_KEY') } })).invoke(user('hi'));
    await collect(openai.createChatModel(spec({ model_name: 'vllm-model', options: { api_key_env: keyEnv('VLLM_KEY') } })).stream(user('hi')));
    await openai.createChatModel(spec({ model_name: 'plain-model' })).invoke(user('hi'));
    tt.same(
      authorizations(server),
      ['Bearer sk-vllm', 'Bearer sk-vllm', 'Bearer sk-plugin-default'],
      "the entry's variable is sent for its model (invoke and stream); an entry without one keeps the plugin-level variable",
    );
  });

  t.test('options.api_key_encrypted is decrypted with core secrets and sent; cached clients do not hold the key in clear', async (tt) => {
    const server = await fixture(tt);
    const secrets = createSecrets(randomBytes(32));
    setEnvFor(tt, { [keyEnv('DEFAULT_KEY')]: 'sk-plugin-default' });
    const openai = await h.provider(server.url, keyEnv('DEFAULT_KEY'), { secrets });
    const vault = spec({ model_name: 'vault-model', options: { api_key_encrypted: secrets.encrypt('sk-from-the-vault') } });
    await openai.createChatModel(vault).invoke(user('hi'));
    await collect(openai.createChatModel(vault).stream(user('hi')));
    await openai.createChatModel(spec()).invoke(user('hi'));
    tt.same(
      authorizations(server),
      ['Bearer sk-from-the-vault', 'Bearer sk-from-the-vault', 'Bearer sk-plugin-default'],
      'the decrypted key reaches the server',
    );
    const cacheKeys = h.cacheKeys(openai);
    tt.equal(cacheKeys.length, 2, 'one cached client per model and key');
    for (const plaintext of ['sk-from-the-vault', 'sk-plugin-default'])
      tt.notMatch(cacheKeys.join('\n'), plaintext, `the cache keys hold no plaintext key (${plaintext.slice(0, 5)}…)`);
  });

  t.test('key precedence: options.api_key_encrypted, then options.api_key_env, then the plugin-level variable', async (tt) => {
    const server = await fixture(tt);
    const secrets = createSecrets(randomBytes(32));
    setEnvFor(tt, { [keyEnv('DEFAULT_KEY')]: 'sk-plugin-default', [keyEnv('ENTRY_KEY')]: 'sk-entry-env' });
    const openai = await h.provider(server.url, keyEnv('DEFAULT_KEY'), { secrets });
    const both = { api_key_encrypted: secrets.encrypt('sk-encrypted'), api_key_env: keyEnv('ENTRY_KEY') };
    await openai.createChatModel(spec({ options: both })).invoke(user('hi'));
    await openai.createChatModel(spec({ options: { api_key_env: keyEnv('ENTRY_KEY') } })).invoke(user('hi'));
    await openai.createChatModel(spec()).invoke(user('hi'));
    tt.same(
      authorizations(server),
      ['Bearer sk-encrypted', 'Bearer sk-entry-env', 'Bearer sk-plugin-default'],
      'encrypted beats the entry variable, which beats the plugin variable',
    );
  });

  t.test("a bad ciphertext or an unset named variable fails that model's calls, naming it, without the key", async (tt) => {
    const server = await fixture(tt);
    const log = recordingLogger();
    const foreign = createSecrets(randomBytes(32)).encrypt('sk-under-another-key');
    setEnvFor(tt, { [keyEnv('DEFAULT_KEY')]: 'sk-plugin-default' });
    const openai = await h.provider(server.url, keyEnv('DEFAULT_KEY'), { log });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        'garbled-model',
        { api_key_encrypted: 'not-a-ciphertext' },
        /^model garbled-model: options\.api_key_encrypted cannot be decrypted with this host's secrets key .*agent-host secrets encrypt/,
      ],
      ['foreign-model', { api_key_encrypted: foreign }, /^model foreign-model: options\.api_key_encrypted cannot be decrypted/],
      [
        'unset-env-model',
        { api_key_env: keyEnv('UNSET_KEY') },
        new RegExp(`^model unset-env-model: options\\.api_key_env names the environment variable ${keyEnv('UNSET_KEY')}, which is not set$`),
      ],
      ['typo-model', { api_key_env: 42 }, /^model typo-model: options\.api_key_env must be a non-empty string$/],
    ];
    for (const [model_name, options, why] of cases) {
      let model: ChatModel | undefined;
      tt.doesNotThrow(() => (model = openai.createChatModel(spec({ model_name, options }))), `${model_name}: building the model does not throw`);
      tt.equal(model?.modelName, model_name, `${model_name}: the model still names itself`);
      tt.match(((await failureOf(model!.invoke(user('hi')))) as Error | undefined)?.message, why, `${model_name}: invoke rejects, saying which model and why`);
      tt.match(((await failureOf(collect(model!.stream(user('hi'))))) as Error | undefined)?.message, why, `${model_name}: stream rejects the same way`);
    }
    tt.equal(server.requests.length, 0, 'no request is sent without the key the entry asked for (not even with the plugin-level key)');
    tt.equal(log.warnings.length, cases.length * 2, 'each failed call is logged as a warning');
    tt.notMatch(JSON.stringify(log.warnings), /sk-under-another-key|sk-plugin-default/, 'the warnings carry no key');
    await openai.createChatModel(spec()).invoke(user('hi'));
    tt.same(authorizations(server), ['Bearer sk-plugin-default'], 'the other models keep working');
  });
}
