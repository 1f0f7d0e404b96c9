// The `anthropic` model provider of plugins/models-langchain (LangChain's
// ChatAnthropic) against a fixture server speaking the Anthropic Messages API
// wire protocol (JSON messages and SSE event streams).
import t from 'tap';
import {
  UpstreamError,
  UpstreamTimeoutError,
  type ChatCallOptions,
  type ChatMessage,
  type ChatModel,
  type ChatModelSpec,
  type ChatStreamChunk,
  type Logger,
  type ModelProvider,
} from '@agent-host/sdk';
import modelsPlugin from '../../plugins/models-langchain/src/index.js';
import { AnthropicProvider } from '../../plugins/models-langchain/src/lib/anthropic-provider.js';
import { startAnthropicFixture, type AnthropicFixture, type AnthropicFixtureOptions } from '../fixtures/anthropic-server.js';

/** What the fixture helper needs of a tap test. */
interface Test {
  teardown(fn: () => Promise<void> | void): void;
}

interface RecordingLogger extends Logger {
  warnings: unknown[];
}

function recordingLogger(): RecordingLogger {
  const warnings: unknown[] = [];
  const log: RecordingLogger = {
    warnings,
    debug() {},
    info() {},
    warn: (obj) => void warnings.push(obj),
    error() {},
    child: () => log,
  };
  return log;
}

async function fixture(tt: Test, respond?: AnthropicFixtureOptions['respond']): Promise<AnthropicFixture> {
  const server = await startAnthropicFixture(respond ? { respond } : {});
  tt.teardown(() => server.close());
  return server;
}

const spec = (overrides: Partial<ChatModelSpec> = {}): ChatModelSpec => ({
  model_name: 'claude-sonnet-4-5',
  temperature: null,
  timeoutMs: 5_000,
  options: {},
  ...overrides,
});

function modelAt(server: AnthropicFixture, overrides: Partial<ChatModelSpec> = {}, log: Logger = recordingLogger()): ChatModel {
  return new AnthropicProvider({ baseUrl: server.url, apiKey: () => 'sk-ant-fixture', log }).createChatModel(spec(overrides));
}

async function collect(stream: AsyncIterable<ChatStreamChunk>): Promise<ChatStreamChunk[]> {
  const chunks: ChatStreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );
const tokensOf = (chunks: ChatStreamChunk[]) => chunks.flatMap((c) => (c.type === 'token' ? [c.content] : []));
const user = (content: string): ChatMessage[] => [{ role: 'user', content }];

async function outcomeOf(server: AnthropicFixture, index: number) {
  const until = Date.now() + 2_000;
  while (server.requests[index]?.outcome === 'pending' && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  return server.requests[index]?.outcome;
}

/** Runs the plugin's real register/init with `config`, resolving deps by ref id. */
async function providersFromPlugin(config: Record<string, unknown>): Promise<Map<string, ModelProvider>> {
  const providers = new Map<string, ModelProvider>();
  const inits: { deps: Record<string, { id: string }>; init(deps: any, config: any): void | Promise<void> }[] = [];
  modelsPlugin.register({ registerInit: (init) => void inits.push(init as never) });
  const [init] = inits;
  if (!init) throw new Error('plugin did not call registerInit');
  const services: Record<string, unknown> = {
    'core.modelProviders': { register: (key: string, provider: ModelProvider) => void providers.set(key, provider) },
    'core.logger': recordingLogger(),
  };
  const deps = Object.fromEntries(
    Object.entries(init.deps).map(([name, ref]) => {
      if (!(ref.id in services)) throw new Error(`test does not provide ${ref.id}`);
      return [name, services[ref.id]];
    }),
  );
  await init.init(deps, modelsPlugin.config.parse(config));
  return providers;
}

t.test('stream yields tokens in order as they arrive, without buffering the reply', async (tt) => {
  const pieces = ['The ', 'quick ', 'brown ', 'fox ', 'jumps.'];
  let firstTokenSeen = false;
  let releaseLast!: () => void;
  const firstTokenObserved = new Promise<void>((resolve) => (releaseLast = resolve));
  let firstTokenSeenBeforeLastSent: boolean | undefined;
  const server = await fixture(tt, () => ({
    chunks: pieces,
    beforeChunk: async (index, total) => {
      if (index !== total - 1) return;
      // Hold message_stop back until the client has seen a token (or 2 s pass,
      // so a buffering client still finishes and the assertion below fails).
      await Promise.race([firstTokenObserved, new Promise((r) => setTimeout(r, 2_000))]);
      firstTokenSeenBeforeLastSent = firstTokenSeen;
    },
  }));
  const tokens: string[] = [];
  for await (const chunk of modelAt(server).stream(user('say something'))) {
    if (chunk.type !== 'token') continue;
    tokens.push(chunk.content);
    if (!firstTokenSeen) {
      firstTokenSeen = true;
      releaseLast();
    }
  }
  tt.same(tokens, pieces, 'each text_delta becomes one token chunk, in the order the server sent them');
  tt.equal(firstTokenSeenBeforeLastSent, true, 'the first token reaches the caller before the server has sent message_stop');
  tt.equal(server.bodies[0]?.stream, true, 'stream() asks the server for an SSE stream');
  tt.equal(server.requests[0]?.path, '/v1/messages', 'the request goes to <base_url>/v1/messages');
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
  const server = await fixture(tt, (body) => (body.output_config?.format?.type === 'json_schema' ? { content: JSON.stringify({ answer: 42 }) } : { content: 'plain prose' }));
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

t.test('a request slower than timeoutMs rejects with UpstreamTimeoutError', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'too late', delayMs: 3_000 }));
  const model = modelAt(server, { timeoutMs: 200 });

  let started = Date.now();
  const invoked = await failureOf(model.invoke(user('slow')));
  tt.ok(invoked instanceof UpstreamTimeoutError, 'invoke past the timeout rejects with UpstreamTimeoutError');
  tt.equal((invoked as UpstreamTimeoutError | undefined)?.status, 504, 'the timeout maps to 504');
  tt.ok(Date.now() - started < 2_000, 'invoke gives up at the timeout instead of waiting for the slow answer');

  started = Date.now();
  const streamed = await failureOf(collect(model.stream(user('slow'))));
  tt.ok(streamed instanceof UpstreamTimeoutError, 'stream past the timeout rejects with UpstreamTimeoutError');
  tt.ok(Date.now() - started < 2_000, 'stream gives up at the timeout instead of waiting for the slow answer');
});

t.test('the deadline bounds the whole stream: a stream that stalls after headers times out', async (tt) => {
  // message_start, ping, content_block_start, two text_deltas, then silence.
  const server = await fixture(tt, () => ({ chunks: ['a ', 'b ', 'c ', 'd'], stallAfter: 5 }));
  const model = modelAt(server, { timeoutMs: 400 });
  const seen: string[] = [];
  const started = Date.now();
  const error = await failureOf(
    (async () => {
      for await (const chunk of model.stream(user('hi'))) if (chunk.type === 'token') seen.push(chunk.content);
    })(),
  );
  tt.ok(error instanceof UpstreamTimeoutError, 'the stalled stream rejects with UpstreamTimeoutError');
  tt.same(seen, ['a ', 'b '], 'the tokens sent before the stall arrived');
  tt.ok(Date.now() - started < 2_000, 'the stream gives up at the deadline');
  tt.equal(await outcomeOf(server, 0), 'disconnected', 'the HTTP request is dropped at the deadline');

  const slowChunks = await fixture(tt, () => ({ chunks: ['a ', 'b ', 'c ', 'd'], chunkDelayMs: 200 }));
  const cut = await failureOf(collect(modelAt(slowChunks, { timeoutMs: 500 }).stream(user('hi'))));
  tt.ok(cut instanceof UpstreamTimeoutError, 'a stream that keeps sending but outlasts the deadline rejects with UpstreamTimeoutError');
});

t.test('HTTP errors reject with UpstreamError', async (tt) => {
  for (const status of [500, 401, 529]) {
    const server = await fixture(tt, () => ({ status, error: { message: `scripted failure ${status}` } }));
    const log = recordingLogger();
    const model = modelAt(server, {}, log);

    const invoked = await failureOf(model.invoke(user('fail')));
    tt.ok(invoked instanceof UpstreamError, `invoke: HTTP ${status} rejects with UpstreamError`);
    tt.notOk(invoked instanceof UpstreamTimeoutError, `invoke: HTTP ${status} is not reported as a timeout`);
    tt.equal((invoked as UpstreamError).status, 502, `invoke: HTTP ${status} maps to 502`);
    tt.match((invoked as Error).message, `scripted failure ${status}`, 'invoke: the upstream error message is kept for the logs');

    const streamed = await failureOf(collect(model.stream(user('fail'))));
    tt.ok(streamed instanceof UpstreamError, `stream: HTTP ${status} rejects with UpstreamError`);
    tt.notOk(streamed instanceof UpstreamTimeoutError, `stream: HTTP ${status} is not reported as a timeout`);
    tt.equal(server.bodies.length, 2, `HTTP ${status} is not retried (one request per call)`);
    tt.equal(log.warnings.length, 2, `each HTTP ${status} failure is logged as a warning`);
  }
});

t.test('an error event in the middle of a stream rejects with UpstreamError', async (tt) => {
  const server = await fixture(tt, () => ({ chunks: ['partial ', 'answer'], streamErrorAfter: 4 }));
  const tokens: string[] = [];
  const error = await failureOf(
    (async () => {
      for await (const chunk of modelAt(server).stream(user('hi'))) if (chunk.type === 'token') tokens.push(chunk.content);
    })(),
  );
  tt.ok(error instanceof UpstreamError, 'the stream rejects with UpstreamError');
  tt.notOk(error instanceof UpstreamTimeoutError, 'it is not reported as a timeout');
  tt.match((error as Error).message, 'Overloaded', 'the error event message is kept');
  tt.same(tokens, ['partial '], 'the tokens before the error event arrived');
});

t.test('an aborted signal stops the stream', async (tt) => {
  const words = Array.from({ length: 20 }, (_, i) => `w${i} `);
  const server = await fixture(tt, () => ({ chunks: words, chunkDelayMs: 50 }));
  const model = modelAt(server);
  const controller = new AbortController();
  const tokens: string[] = [];
  const started = Date.now();
  const outcome = await failureOf(
    (async () => {
      for await (const chunk of model.stream(user('long answer'), { signal: controller.signal })) {
        if (chunk.type !== 'token') continue;
        tokens.push(chunk.content);
        if (tokens.length === 2) controller.abort();
      }
    })(),
  );
  tt.same(tokens, ['w0 ', 'w1 '], 'no token is yielded after the signal aborts');
  tt.notOk(outcome instanceof UpstreamError || outcome instanceof UpstreamTimeoutError, 'an abort is not reported as an upstream failure');
  tt.ok(Date.now() - started < 20 * 50, 'the stream stops well before the server would have finished');
  tt.equal(await outcomeOf(server, 0), 'disconnected', 'the HTTP request is dropped, so the server stops sending');

  const before = new AbortController();
  before.abort();
  const options: ChatCallOptions = { signal: before.signal };
  await tt.rejects(model.invoke(user('x'), options), { name: 'AbortError' }, 'invoke with an already aborted signal rejects with AbortError');
  await tt.rejects(collect(model.stream(user('x'), options)), { name: 'AbortError' }, 'stream with an already aborted signal rejects with AbortError');
  tt.equal(server.requests.length, 1, 'an already aborted call sends no request');
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
  const saved = process.env.ANTHROPIC_API_KEY;
  process.env[envName] = 'sk-ant-from-named-env';
  process.env.ANTHROPIC_API_KEY = 'sk-ant-from-default-env';
  tt.teardown(() => {
    delete process.env[envName];
    if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
    else process.env.ANTHROPIC_API_KEY = saved;
  });

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
