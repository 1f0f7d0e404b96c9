// The `ollama` model provider of plugins/models-langchain (LangChain's
// ChatOllama) against a fixture server speaking Ollama's native chat API wire
// protocol (POST /api/chat, NDJSON streams).
import t from 'tap';
import { type ChatModel, type ChatModelSpec, type HttpClient, type Logger } from '@agent-host/sdk';
import modelsPlugin from '@agent-host/plugin-models-langchain';
import { OllamaProvider } from '../src/lib/ollama-provider.js';
import { recordingHttp } from '../../../test/helpers/http-client.js';
import { startOllamaFixture, type OllamaFixture, type OllamaFixtureOptions } from '../../../test/fixtures/ollama-server.js';
import {
  chatModel,
  collect,
  providerContract,
  providersFromPlugin,
  recordingLogger,
  specFor,
  startedFixture,
  tokensOf,
  user,
  type Test,
} from '../../../test/helpers/model-provider.js';

const fixture = (tt: Test, respond?: OllamaFixtureOptions['respond']): Promise<OllamaFixture> => startedFixture(tt, startOllamaFixture, respond);
const spec = specFor('llama3.2');

function modelAt(
  server: OllamaFixture,
  overrides: Partial<ChatModelSpec> = {},
  log: Logger = recordingLogger(),
  http: HttpClient = recordingHttp(),
): ChatModel {
  return chatModel(new OllamaProvider({ baseUrl: server.url, http, log }), spec(overrides));
}

providerContract(t, {
  fixture,
  modelAt,
  framesBeforeThirdToken: 2, // one line a token
  errorStatuses: [500, 404],
  errorReply: (status, message) => ({ status, error: message }),
  checkStreamRequest(tt, server) {
    tt.equal(server.requests[0]?.path, '/api/chat', 'the request goes to <base_url>/api/chat');
    tt.equal(server.bodies[0]?.model, 'llama3.2', 'the request names the catalog model');
    tt.same(server.bodies[0]?.messages, [{ role: 'user', content: 'say something' }], 'the messages are sent in the Ollama shape');
  },
  midStreamError: {
    frame: 'line',
    reply: { chunks: ['partial ', 'answer'], streamErrorAfter: 1, error: 'model runner has unexpectedly stopped' },
    message: 'model runner has unexpectedly stopped',
  },
});

t.test('provider-reported usage comes through in stream and invoke', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'Two words', usage: { prompt_eval_count: 17, eval_count: 4 } }));
  const model = modelAt(server);
  const chunks = await collect(model.stream(user('count me')));
  const usages = chunks.filter((c) => c.type === 'usage');
  tt.same(
    usages,
    [{ type: 'usage', usage: { input_tokens: 17, output_tokens: 4 } }],
    'stream yields one usage chunk from prompt_eval_count / eval_count of the done line',
  );
  tt.equal(chunks.at(-1)?.type, 'usage', 'the usage chunk comes after the tokens');
  const completion = await model.invoke(user('count me'));
  tt.same(completion.usage, { input_tokens: 17, output_tokens: 4 }, 'invoke returns the server-reported usage');
  tt.equal(completion.content, 'Two words', 'invoke returns the message content');
});

t.test('usage is absent when the server reports none', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'no counts here', usage: null }));
  const model = modelAt(server);
  const completion = await model.invoke(user('hello'));
  tt.notOk('usage' in completion, 'invoke leaves usage out when the done line carries no counts (core estimates it)');
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
    { name: 'get_time', description: 'The current time', parameters: { type: 'object', properties: {} } },
  ];
  const server = await fixture(tt, (body) =>
    body.tools
      ? {
          tool_calls: [
            { name: 'get_weather', arguments: { city: 'Paris', days: 3 } },
            { id: 'call_oslo', name: 'get_weather', arguments: { city: 'Oslo, Norway', days: 1 } },
            { name: 'get_time', arguments: {} },
          ],
        }
      : { content: 'no tools offered' },
  );
  const model = modelAt(server);
  const expected = [
    ['get_weather', { city: 'Paris', days: 3 }],
    ['get_weather', { city: 'Oslo, Norway', days: 1 }],
    ['get_time', {}],
  ];

  const chunks = await collect(model.stream(user('weather in Paris and Oslo, and the time?'), { tools }));
  const streamed = chunks.flatMap((c) => (c.type === 'tool_call' ? [c.call] : []));
  tt.same(
    streamed.map((c) => [c.name, c.arguments]),
    expected,
    'message.tool_calls (one line each) become calls with their argument objects',
  );
  tt.ok(
    streamed.every((c) => typeof c.id === 'string' && c.id.length > 0),
    'every call has an id',
  );
  tt.equal(new Set(streamed.map((c) => c.id)).size, 3, 'the call ids are distinct');
  tt.equal(tokensOf(chunks).join(''), '', 'a pure tool-call answer streams no text');

  const completion = await model.invoke(user('weather in Paris?'), { tools });
  tt.same(
    completion.tool_calls.map((c) => [c.name, c.arguments]),
    expected,
    'invoke returns the tool calls with their arguments',
  );

  tt.same(
    server.bodies[0]?.tools,
    tools.map((x) => ({ type: 'function', function: { name: x.name, description: x.description, parameters: x.parameters } })),
    'the tool specs are sent as Ollama function tools with name, description and JSON schema',
  );
  tt.equal(server.bodies.length, 2, 'one request per call');
});

t.test('assistant tool calls and tool results are sent back in the conversation', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'It is sunny.' }));
  await modelAt(server).invoke([
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_9', name: 'get_weather', arguments: { city: 'Paris' } }] },
    { role: 'tool', content: '{"sky":"clear"}', tool_call_id: 'call_9' },
  ]);
  const [system, , assistant, tool] = server.bodies[0]?.messages ?? [];
  tt.same(system, { role: 'system', content: 'Be brief.' }, 'the system message is sent as a system message');
  tt.same(
    assistant?.tool_calls?.map((c: any) => [c.function?.name, c.function?.arguments]),
    [['get_weather', { city: 'Paris' }]],
    'the assistant message carries the tool call with an arguments object',
  );
  tt.same([tool?.role, tool?.content], ['tool', '{"sky":"clear"}'], 'the tool result goes out as a tool message');
});

t.test('responseSchema sends the schema as the native format', async (tt) => {
  const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] };
  const server = await fixture(tt, (body) => (typeof body.format === 'object' ? { content: JSON.stringify({ answer: 42 }) } : { content: 'plain prose' }));
  const model = modelAt(server);
  const completion = await model.invoke(user('the answer?'), { responseSchema: { name: 'final_answer', schema } });
  tt.same(server.bodies[0]?.format, schema, 'invoke sends the JSON schema as format');
  tt.same(JSON.parse(completion.content), { answer: 42 }, 'the JSON text the server answered is returned as content');

  const chunks = await collect(model.stream(user('the answer?'), { responseSchema: { name: 'final_answer', schema } }));
  tt.same(server.bodies[1]?.format, schema, 'stream sends the format too');
  tt.same(JSON.parse(tokensOf(chunks).join('')), { answer: 42 }, 'streamed tokens join into the JSON answer');

  await model.invoke(user('plain'));
  tt.notOk('format' in (server.bodies[2] ?? {}), 'no format without responseSchema');
});

t.test("a catalog entry's options.base_url overrides the plugin's base URL", async (tt) => {
  const pluginDefault = await fixture(tt, () => ({ content: 'from the plugin default' }));
  const catalogTarget = await fixture(tt, () => ({ content: 'from the catalog base_url' }));
  const providers = await providersFromPlugin({ ollama_base_url: pluginDefault.url });
  const ollama = providers.get('ollama');
  tt.ok(ollama, 'the plugin registers the ollama provider');
  tt.equal(ollama?.offline, false, 'the ollama provider is not offline');
  const model = ollama!.createChatModel(spec({ options: { base_url: catalogTarget.url } }));
  tt.equal(model.provider, 'ollama', 'the model reports provider ollama');
  const completion = await model.invoke(user('where am I?'));
  tt.equal(completion.content, 'from the catalog base_url', 'the answer comes from the catalog base_url');
  tt.equal(catalogTarget.bodies.length, 1, 'the catalog base_url server received the request');
  tt.equal(pluginDefault.requests.length, 0, "the plugin's base URL received nothing");

  await ollama!.createChatModel(spec()).invoke(user('and now?'));
  tt.equal(pluginDefault.bodies.length, 1, "without options.base_url the plugin's ollama_base_url is used");
  tt.equal(modelsPlugin.config.parse({}).ollama_base_url, 'http://127.0.0.1:11434', 'ollama_base_url defaults to the local Ollama server');
});

t.test('temperature is sent only when the spec sets one', async (tt) => {
  const server = await fixture(tt);
  await modelAt(server, { temperature: 0.3 }).invoke(user('warm'));
  await modelAt(server, { temperature: null }).invoke(user('default'));
  tt.equal(server.bodies[0]?.options?.temperature, 0.3, 'a set temperature is sent in options');
  tt.notOk('temperature' in (server.bodies[1]?.options ?? {}), "temperature null leaves the model's default (not sent)");
});
