// The `anthropic` model provider of plugins/models-langchain (LangChain's
// ChatAnthropic) against a fixture server speaking the Anthropic Messages API
// wire protocol (JSON messages and SSE event streams).
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { type ChatModel, type ChatModelSpec, type HttpClient, type Logger } from '@agent-host/sdk';
import { createSecrets } from '../../../core/src/services/secrets.js';
import modelsPlugin from '@agent-host/plugin-models-langchain';
import { AnthropicProvider } from '../src/lib/anthropic-provider.js';
import { recordingHttp } from '../../../test/helpers/http-client.js';
import { startAnthropicFixture, type AnthropicFixture, type AnthropicFixtureOptions } from '../../../test/fixtures/anthropic-server.js';
import {
  chatModel,
  collect,
  failureOf,
  providerContract,
  providersFromPlugin,
  recordingLogger,
  setEnvFor,
  specFor,
  startedFixture,
  tokensOf,
  user,
  type Test,
} from '../../../test/helpers/model-provider.js';

const fixture = (tt: Test, respond?: AnthropicFixtureOptions['respond']): Promise<AnthropicFixture> => startedFixture(tt, startAnthropicFixture, respond);
const spec = specFor('claude-sonnet-4-5');

function modelAt(
  server: AnthropicFixture,
  overrides: Partial<ChatModelSpec> = {},
  log: Logger = recordingLogger(),
  http: HttpClient = recordingHttp(),
): ChatModel {
  return chatModel(new AnthropicProvider({ baseUrl: server.url, apiKey: () => 'sk-ant-fixture', http, log }), spec(overrides));
}

providerContract(t, {
  fixture,
  modelAt,
  framesBeforeThirdToken: 5, // message_start, ping, content_block_start, two text_deltas
  errorStatuses: [500, 401, 529],
  errorReply: (status, message) => ({ status, error: { message } }),
  checkStreamRequest(tt, server) {
    tt.equal(server.bodies[0]?.stream, true, 'stream() asks the server for an SSE stream');
    tt.equal(server.requests[0]?.path, '/v1/messages', 'the request goes to <base_url>/v1/messages');
  },
  midStreamError: { frame: 'event', reply: { chunks: ['partial ', 'answer'], streamErrorAfter: 4 }, message: 'Overloaded' },
});

t.test('provider-reported usage comes through in stream and invoke', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'Two words', usage: { input_tokens: 17, output_tokens: 4 } }));
  const model = modelAt(server);
  const chunks = await collect(model.stream(user('count me')));
  const usages = chunks.filter((c) => c.type === 'usage');
  tt.same(
    usages,
    [{ type: 'usage', usage: { input_tokens: 17, output_tokens: 4 } }],
    "stream yields one usage chunk: input from message_start, output from message_delta's cumulative count (not added to message_start's preliminary one)",
  );
  tt.equal(chunks.at(-1)?.type, 'usage', 'the usage chunk comes after the tokens');
  const completion = await model.invoke(user('count me'));
  tt.same(completion.usage, { input_tokens: 17, output_tokens: 4 }, 'invoke returns the server-reported usage');
  tt.equal(completion.content, 'Two words', 'invoke returns the text block');
  tt.equal(server.bodies[1]?.stream, false, 'invoke asks for a single JSON message');
});

t.test('tool calls are returned with parsed arguments', async (tt) => {
  const tools = [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] },
    },
    { name: 'get_time', description: 'The current time', parameters: { type: 'object', properties: {} } },
  ];
  const server = await fixture(tt, (body) =>
    body.tools
      ? {
          content: 'Let me look.',
          tool_calls: [
            { id: 'toolu_weather_1', name: 'get_weather', input: { city: 'Paris', days: 3 } },
            { id: 'toolu_weather_2', name: 'get_weather', input: { city: 'Oslo, Norway', days: 1 } },
            { id: 'toolu_time_3', name: 'get_time', input: {} },
          ],
        }
      : { content: 'no tools offered' },
  );
  const model = modelAt(server);
  const expected = [
    { id: 'toolu_weather_1', name: 'get_weather', arguments: { city: 'Paris', days: 3 } },
    { id: 'toolu_weather_2', name: 'get_weather', arguments: { city: 'Oslo, Norway', days: 1 } },
    { id: 'toolu_time_3', name: 'get_time', arguments: {} },
  ];

  const chunks = await collect(model.stream(user('weather in Paris and Oslo, and the time?'), { tools }));
  const streamed = chunks.flatMap((c) => (c.type === 'tool_call' ? [c.call] : []));
  tt.same(streamed, expected, 'tool_use blocks streamed as input_json_delta fragments are assembled into calls with parsed arguments');
  tt.equal(tokensOf(chunks).join(''), 'Let me look.', 'the text block before the tool calls still streams as tokens');

  const completion = await model.invoke(user('weather in Paris?'), { tools });
  tt.same(completion.tool_calls, expected, 'invoke returns the tool_use blocks as calls with their input as arguments');
  tt.equal(completion.content, 'Let me look.', 'invoke returns only the text of a mixed text and tool_use answer');

  tt.same(
    server.bodies[0]?.tools,
    tools.map((x) => ({ name: x.name, description: x.description, input_schema: x.parameters })),
    'the tool specs are sent as Anthropic tools with name, description and input_schema',
  );
  tt.equal(server.bodies.length, 2, 'one request per call');
});

t.test('system prompt, assistant tool calls and tool results are sent in the Anthropic shape', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'It is sunny.' }));
  await modelAt(server).invoke([
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'toolu_9', name: 'get_weather', arguments: { city: 'Paris' } }] },
    { role: 'tool', content: '{"sky":"clear"}', tool_call_id: 'toolu_9' },
  ]);
  const body = server.bodies[0];
  tt.equal(body?.system, 'Be brief.', 'the system message goes to the top-level system parameter');
  const [first, assistant, result] = body?.messages ?? [];
  tt.same(first, { role: 'user', content: 'weather?' }, 'the user message is sent as is');
  tt.same(
    assistant?.content?.find((b: any) => b.type === 'tool_use'),
    { type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { city: 'Paris' } },
    'the assistant message carries a tool_use block with the call id and input object',
  );
  tt.equal(result?.role, 'user', 'the tool result goes out in a user message');
  tt.same(result?.content, [{ type: 'tool_result', content: '{"sky":"clear"}', tool_use_id: 'toolu_9' }], 'as a tool_result block answering its call');
});

t.test('responseSchema asks for native JSON-schema output (output_config.format)', async (tt) => {
  const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false };
  const server = await fixture(tt, (body) =>
    body.output_config?.format?.type === 'json_schema' ? { content: JSON.stringify({ answer: 42 }) } : { content: 'plain prose' },
  );
  const model = modelAt(server);
  const completion = await model.invoke(user('the answer?'), { responseSchema: { name: 'final_answer', schema } });
  tt.same(server.bodies[0]?.output_config, { format: { type: 'json_schema', schema } }, 'invoke sends output_config.format with the schema');
  tt.notOk('tool_choice' in (server.bodies[0] ?? {}), 'no tool is forced for structured output');
  tt.same(JSON.parse(completion.content), { answer: 42 }, 'the JSON text the server answered is returned as content');

  const chunks = await collect(model.stream(user('the answer?'), { responseSchema: { name: 'final_answer', schema } }));
  tt.same(server.bodies[1]?.output_config?.format?.schema, schema, 'stream sends output_config.format too');
  tt.same(JSON.parse(tokensOf(chunks).join('')), { answer: 42 }, 'streamed tokens join into the JSON answer');

  await model.invoke(user('plain'));
  tt.notOk('output_config' in (server.bodies[2] ?? {}), 'no output_config without responseSchema');
});

t.test("a catalog entry's options.base_url overrides the plugin's base URL", async (tt) => {
  const pluginDefault = await fixture(tt, () => ({ content: 'from the plugin default' }));
  const catalogTarget = await fixture(tt, () => ({ content: 'from the catalog base_url' }));
  const providers = await providersFromPlugin({ anthropic_base_url: pluginDefault.url });
  const anthropic = providers.get('anthropic')!;
  const completion = await anthropic.createChatModel(spec({ options: { base_url: catalogTarget.url } })).invoke(user('where am I?'));
  tt.equal(completion.content, 'from the catalog base_url', 'the answer comes from the catalog base_url');
  tt.equal(catalogTarget.bodies.length, 1, 'the catalog base_url server received the request');
  tt.equal(pluginDefault.requests.length, 0, "the plugin's base URL received nothing");

  await anthropic.createChatModel(spec()).invoke(user('and now?'));
  tt.equal(pluginDefault.bodies.length, 1, "without options.base_url the plugin's anthropic_base_url is used");
});

t.test('the plugin reads the API key from the env var named in config', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'authorised' }));
  const envName = `AGENT_HOST_TEST_ANTHROPIC_KEY_${process.pid}`;
  setEnvFor(tt, { [envName]: 'sk-ant-from-named-env', ANTHROPIC_API_KEY: 'sk-ant-from-default-env' });

  const providers = await providersFromPlugin({ anthropic_base_url: server.url, anthropic_api_key_env: envName });
  const anthropic = providers.get('anthropic');
  tt.ok(anthropic, 'the plugin registers the anthropic provider');
  tt.equal(anthropic?.offline, false, 'the anthropic provider is not offline');
  const model = anthropic!.createChatModel(spec({ model_name: 'claude-haiku-4-5' }));
  tt.equal(model.provider, 'anthropic', 'the model reports provider anthropic');
  tt.equal(model.modelName, 'claude-haiku-4-5', 'the model reports the catalog model name');
  await model.invoke(user('who am I?'));
  tt.equal(server.requests[0]?.headers['x-api-key'], 'sk-ant-from-named-env', 'the x-api-key header carries the key from the configured env var');
  tt.notOk(server.requests[0]?.headers.authorization, 'no Authorization header is sent besides the key');
  tt.ok(server.requests[0]?.headers['anthropic-version'], 'the anthropic-version header is sent');
  tt.equal(server.bodies[0]?.model, 'claude-haiku-4-5', 'the request names the catalog model');

  const defaults = await providersFromPlugin({ anthropic_base_url: server.url });
  await defaults.get('anthropic')!.createChatModel(spec()).invoke(user('and by default?'));
  tt.equal(server.requests[1]?.headers['x-api-key'], 'sk-ant-from-default-env', 'without anthropic_api_key_env the key comes from ANTHROPIC_API_KEY');
});

t.test("a catalog entry's options.api_key_encrypted or options.api_key_env selects that model's key", async (tt) => {
  const server = await fixture(tt);
  const secrets = createSecrets(randomBytes(32));
  const entryEnv = `AGENT_HOST_TEST_ANTHROPIC_ENTRY_KEY_${process.pid}`;
  setEnvFor(tt, { [entryEnv]: 'sk-ant-entry-env', ANTHROPIC_API_KEY: 'sk-ant-from-default-env' });
  const anthropic = (await providersFromPlugin({ anthropic_base_url: server.url }, { secrets })).get('anthropic')!;
  await anthropic.createChatModel(spec({ options: { api_key_encrypted: secrets.encrypt('sk-ant-encrypted'), api_key_env: entryEnv } })).invoke(user('hi'));
  await anthropic.createChatModel(spec({ options: { api_key_env: entryEnv } })).invoke(user('hi'));
  tt.same(
    server.requests.map((r) => r.headers['x-api-key']),
    ['sk-ant-encrypted', 'sk-ant-entry-env'],
    'the encrypted key wins, then the entry variable',
  );
  const failure = await failureOf(
    anthropic.createChatModel(spec({ model_name: 'claude-broken', options: { api_key_encrypted: 'v1:bad:bad:bad' } })).invoke(user('hi')),
  );
  tt.match(
    (failure as Error | undefined)?.message,
    /^model claude-broken: options\.api_key_encrypted cannot be decrypted/,
    'a bad ciphertext fails the call, naming the model',
  );
  tt.equal(server.requests.length, 2, 'and sends nothing');
});

t.test('the plugin defaults to the Anthropic API URL', async (tt) => {
  const config = modelsPlugin.config.parse({});
  tt.equal(config.anthropic_base_url, 'https://api.anthropic.com', 'anthropic_base_url defaults to the URL the Anthropic SDK uses');
  tt.equal(config.anthropic_api_key_env, 'ANTHROPIC_API_KEY', 'anthropic_api_key_env defaults to ANTHROPIC_API_KEY');
});

t.test('temperature is sent only when the spec sets one', async (tt) => {
  const server = await fixture(tt);
  await modelAt(server, { temperature: 0.3 }).invoke(user('warm'));
  await modelAt(server, { temperature: null }).invoke(user('default'));
  tt.equal(server.bodies[0]?.temperature, 0.3, 'a set temperature is sent');
  tt.notOk('temperature' in (server.bodies[1] ?? {}), "temperature null leaves the provider's default (not sent)");
  tt.ok(Number.isInteger(server.bodies[1]?.max_tokens), 'max_tokens, required by the API, is always sent');
});
