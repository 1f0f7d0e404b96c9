// The `openai` model provider of plugins/models-langchain against an
// OpenAI-compatible fixture server speaking the real wire protocol.
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
import { OpenAiCompatibleProvider } from '../../plugins/models-langchain/src/lib/openai-provider.js';
import { startOpenAiFixture, type OpenAiFixture, type OpenAiFixtureOptions } from '../fixtures/openai-server.js';

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

async function fixture(tt: Test, respond?: OpenAiFixtureOptions['respond']): Promise<OpenAiFixture> {
  const server = await startOpenAiFixture(respond ? { respond } : {});
  tt.teardown(() => server.close());
  return server;
}

const spec = (overrides: Partial<ChatModelSpec> = {}): ChatModelSpec => ({
  model_name: 'gpt-4o-mini',
  temperature: null,
  timeoutMs: 5_000,
  options: {},
  ...overrides,
});

function modelAt(server: OpenAiFixture, overrides: Partial<ChatModelSpec> = {}, log: Logger = recordingLogger()): ChatModel {
  return new OpenAiCompatibleProvider({ baseUrl: server.url, apiKey: () => 'sk-fixture', log }).createChatModel(spec(overrides));
}

async function collect(stream: AsyncIterable<ChatStreamChunk>): Promise<ChatStreamChunk[]> {
  const chunks: ChatStreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const tokensOf = (chunks: ChatStreamChunk[]) => chunks.flatMap((c) => (c.type === 'token' ? [c.content] : []));
const user = (content: string): ChatMessage[] => [{ role: 'user', content }];

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
      // Hold the last event back until the client has seen a token (or 2 s pass,
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
  tt.same(tokens, pieces, 'each content delta becomes one token chunk, in the order the server sent them');
  tt.equal(firstTokenSeenBeforeLastSent, true, 'the first token reaches the caller before the server has sent the end of the stream');
  tt.equal(server.bodies[0]?.stream, true, 'stream() asks the server for an SSE stream');
});

t.test('provider-reported usage comes through in stream and invoke', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'Two words', usage: { prompt_tokens: 17, completion_tokens: 4 } }));
  const model = modelAt(server);
  const chunks = await collect(model.stream(user('count me')));
  const usages = chunks.filter((c) => c.type === 'usage');
  tt.same(usages, [{ type: 'usage', usage: { input_tokens: 17, output_tokens: 4 } }], 'stream yields exactly one usage chunk with the server-reported counts');
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
  tt.same([tool?.role, tool?.tool_call_id, tool?.content], ['tool', 'call_9', '{"sky":"clear"}'], 'the tool result goes out as a tool message answering its call');
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

t.test('a request slower than timeoutMs rejects with UpstreamTimeoutError', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'too late', delayMs: 3_000 }));
  const model = modelAt(server, { timeoutMs: 200 });

  let started = Date.now();
  const invoked = await model.invoke(user('slow')).then(
    () => undefined,
    (error: unknown) => error,
  );
  tt.ok(invoked instanceof UpstreamTimeoutError, 'invoke past the timeout rejects with UpstreamTimeoutError');
  tt.equal((invoked as UpstreamTimeoutError | undefined)?.status, 504, 'the timeout maps to 504');
  tt.ok(Date.now() - started < 2_000, 'invoke gives up at the timeout instead of waiting for the slow answer');

  started = Date.now();
  const streamed = await collect(model.stream(user('slow'))).then(
    () => undefined,
    (error: unknown) => error,
  );
  tt.ok(streamed instanceof UpstreamTimeoutError, 'stream past the timeout rejects with UpstreamTimeoutError');
  tt.ok(Date.now() - started < 2_000, 'stream gives up at the timeout instead of waiting for the slow answer');
});

t.test('HTTP errors reject with UpstreamError', async (tt) => {
  for (const status of [500, 401]) {
    const server = await fixture(tt, () => ({ status, error: { message: `scripted failure ${status}` } }));
    const log = recordingLogger();
    const model = modelAt(server, {}, log);

    const invoked = await model.invoke(user('fail')).then(
      () => undefined,
      (error: unknown) => error,
    );
    tt.ok(invoked instanceof UpstreamError, `invoke: HTTP ${status} rejects with UpstreamError`);
    tt.notOk(invoked instanceof UpstreamTimeoutError, `invoke: HTTP ${status} is not reported as a timeout`);
    tt.equal((invoked as UpstreamError).status, 502, `invoke: HTTP ${status} maps to 502`);
    tt.match((invoked as Error).message, `scripted failure ${status}`, `invoke: the upstream error message is kept for the logs`);

    const streamed = await collect(model.stream(user('fail'))).then(
      () => undefined,
      (error: unknown) => error,
    );
    tt.ok(streamed instanceof UpstreamError, `stream: HTTP ${status} rejects with UpstreamError`);
    tt.equal(server.bodies.length, 2, `HTTP ${status} is not retried (one request per call)`);
    tt.equal(log.warnings.length, 2, `each HTTP ${status} failure is logged as a warning`);
  }
});

t.test('an aborted signal stops the stream', async (tt) => {
  const words = Array.from({ length: 20 }, (_, i) => `w${i} `);
  const server = await fixture(tt, () => ({ chunks: words, chunkDelayMs: 50 }));
  const model = modelAt(server);
  const controller = new AbortController();
  const tokens: string[] = [];
  const started = Date.now();
  const outcome = await (async () => {
    for await (const chunk of model.stream(user('long answer'), { signal: controller.signal })) {
      if (chunk.type !== 'token') continue;
      tokens.push(chunk.content);
      if (tokens.length === 2) controller.abort();
    }
  })().then(
    () => 'ended',
    (error: unknown) => error,
  );
  tt.same(tokens, ['w0 ', 'w1 '], 'no token is yielded after the signal aborts');
  tt.notOk(outcome instanceof UpstreamError || outcome instanceof UpstreamTimeoutError, 'an abort is not reported as an upstream failure');
  tt.ok(Date.now() - started < 20 * 50, 'the stream stops well before the server would have finished');
  const deadline = Date.now() + 2_000;
  while (server.requests[0]?.outcome === 'pending' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  tt.equal(server.requests[0]?.outcome, 'disconnected', 'the HTTP request is dropped, so the server stops sending');

  const before = new AbortController();
  before.abort();
  const options: ChatCallOptions = { signal: before.signal };
  await tt.rejects(model.invoke(user('x'), options), { name: 'AbortError' }, 'invoke with an already aborted signal rejects with AbortError');
  await tt.rejects(collect(model.stream(user('x'), options)), { name: 'AbortError' }, 'stream with an already aborted signal rejects with AbortError');
  tt.equal(server.requests.length, 1, 'an already aborted call sends no request');
});

t.test('an aborted signal stops a pending invoke', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'late', delayMs: 3_000 }));
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(), 100);
  const error = await modelAt(server)
    .invoke(user('x'), { signal: controller.signal })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  tt.equal((error as Error | undefined)?.name, 'AbortError', 'invoke rejects with AbortError when its signal aborts');
  tt.ok(Date.now() - started < 2_000, 'invoke stops at the abort, not when the server answers');
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
  const saved = process.env.OPENAI_API_KEY;
  process.env[envName] = 'sk-from-named-env';
  process.env.OPENAI_API_KEY = 'sk-from-default-env';
  tt.teardown(() => {
    delete process.env[envName];
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  });

  const providers = await providersFromPlugin({ openai_base_url: server.url, openai_api_key_env: envName });
  const openai = providers.get('openai');
  tt.ok(openai, 'the plugin registers the openai provider');
  tt.equal(openai?.offline, false, 'the openai provider is not offline');
  const model = openai!.createChatModel(spec({ model_name: 'fixture-model-1' }));
  tt.equal(model.provider, 'openai', 'the model reports provider openai');
  tt.equal(model.modelName, 'fixture-model-1', 'the model reports the catalog model name');
  await model.invoke(user('who am I?'));
  tt.equal(server.requests[0]?.headers.authorization, 'Bearer sk-from-named-env', 'the Authorization header carries the key from the configured env var');
  tt.equal(server.bodies[0]?.model, 'fixture-model-1', 'the request names the catalog model');

  const defaults = await providersFromPlugin({ openai_base_url: server.url });
  await defaults.get('openai')!.createChatModel(spec()).invoke(user('and by default?'));
  tt.equal(server.requests[1]?.headers.authorization, 'Bearer sk-from-default-env', 'without openai_api_key_env the key comes from OPENAI_API_KEY');
});

t.test('temperature is sent only when the spec sets one', async (tt) => {
  const server = await fixture(tt);
  await modelAt(server, { temperature: 0.3 }).invoke(user('warm'));
  await modelAt(server, { temperature: null }).invoke(user('default'));
  tt.equal(server.bodies[0]?.temperature, 0.3, 'a set temperature is sent');
  tt.notOk('temperature' in (server.bodies[1] ?? {}), "temperature null leaves the provider's default (not sent)");
});

t.test('the model timeout bounds the whole streamed request, not only the headers', async (t) => {
  const fixture = await startOpenAiFixture({ respond: () => ({ chunks: ['a ', 'b ', 'c ', 'd'], chunkDelayMs: 200 }) });
  t.teardown(() => fixture.close());
  const model = new OpenAiCompatibleProvider({ baseUrl: fixture.url, apiKey: () => 'k', log: recordingLogger() }).createChatModel({
    model_name: 'stall',
    temperature: null,
    timeoutMs: 300,
    options: {},
  });
  const seen: string[] = [];
  await t.rejects(
    (async () => {
      for await (const chunk of model.stream([{ role: 'user', content: 'hi' }])) if (chunk.type === 'token') seen.push(chunk.content);
    })(),
    UpstreamTimeoutError,
  );
  t.ok(seen.length < 4, 'the stream is cut before it completes');
});
