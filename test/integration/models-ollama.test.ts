// The `ollama` model provider of plugins/models-langchain (LangChain's
// ChatOllama) against a fixture server speaking Ollama's native chat API wire
// protocol (POST /api/chat, NDJSON streams).
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
import { OllamaProvider } from '../../plugins/models-langchain/src/lib/ollama-provider.js';
import { startOllamaFixture, type OllamaFixture, type OllamaFixtureOptions } from '../fixtures/ollama-server.js';

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

async function fixture(tt: Test, respond?: OllamaFixtureOptions['respond']): Promise<OllamaFixture> {
  const server = await startOllamaFixture(respond ? { respond } : {});
  tt.teardown(() => server.close());
  return server;
}

const spec = (overrides: Partial<ChatModelSpec> = {}): ChatModelSpec => ({
  model_name: 'llama3.2',
  temperature: null,
  timeoutMs: 5_000,
  options: {},
  ...overrides,
});

function modelAt(server: OllamaFixture, overrides: Partial<ChatModelSpec> = {}, log: Logger = recordingLogger()): ChatModel {
  return new OllamaProvider({ baseUrl: server.url, log }).createChatModel(spec(overrides));
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

async function outcomeOf(server: OllamaFixture, index: number) {
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
      // Hold the final `done` line back until the client has seen a token (or
      // 2 s pass, so a buffering client still finishes and the assertion fails).
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
  tt.same(tokens, pieces, 'each message.content line becomes one token chunk, in the order the server sent them');
  tt.equal(firstTokenSeenBeforeLastSent, true, 'the first token reaches the caller before the server has sent the done line');
  tt.equal(server.requests[0]?.path, '/api/chat', 'the request goes to <base_url>/api/chat');
  tt.equal(server.bodies[0]?.model, 'llama3.2', 'the request names the catalog model');
  tt.same(server.bodies[0]?.messages, [{ role: 'user', content: 'say something' }], 'the messages are sent in the Ollama shape');
});

t.test('provider-reported usage comes through in stream and invoke', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'Two words', usage: { prompt_eval_count: 17, eval_count: 4 } }));
  const model = modelAt(server);
  const chunks = await collect(model.stream(user('count me')));
  const usages = chunks.filter((c) => c.type === 'usage');
  tt.same(usages, [{ type: 'usage', usage: { input_tokens: 17, output_tokens: 4 } }], 'stream yields one usage chunk from prompt_eval_count / eval_count of the done line');
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

t.test('a request slower than timeoutMs rejects with UpstreamTimeoutError', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'too late', delayMs: 3_000 }));
  const model = modelAt(server, { timeoutMs: 200 });

  let started = Date.now();
  const invoked = await failureOf(model.invoke(user('slow')));
  tt.ok(invoked instanceof UpstreamTimeoutError, 'invoke past the timeout rejects with UpstreamTimeoutError');
  tt.equal((invoked as UpstreamTimeoutError | undefined)?.status, 504, 'the timeout maps to 504');
  tt.ok(Date.now() - started < 2_000, 'invoke gives up at the timeout instead of waiting for the slow answer');
  tt.equal(await outcomeOf(server, 0), 'disconnected', 'the HTTP request is dropped at the deadline');

  started = Date.now();
  const streamed = await failureOf(collect(model.stream(user('slow'))));
  tt.ok(streamed instanceof UpstreamTimeoutError, 'stream past the timeout rejects with UpstreamTimeoutError');
  tt.ok(Date.now() - started < 2_000, 'stream gives up at the timeout instead of waiting for the slow answer');
  tt.equal(await outcomeOf(server, 1), 'disconnected', 'the streamed HTTP request is dropped at the deadline');
});

t.test('the deadline bounds the whole stream: a stream that stalls after headers times out', async (tt) => {
  const server = await fixture(tt, () => ({ chunks: ['a ', 'b ', 'c ', 'd'], stallAfter: 2 }));
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
  tt.equal(await outcomeOf(server, 0), 'disconnected', 'the HTTP request is dropped at the deadline, not left open');

  const slowChunks = await fixture(tt, () => ({ chunks: ['a ', 'b ', 'c ', 'd'], chunkDelayMs: 200 }));
  const cut = await failureOf(collect(modelAt(slowChunks, { timeoutMs: 500 }).stream(user('hi'))));
  tt.ok(cut instanceof UpstreamTimeoutError, 'a stream that keeps sending but outlasts the deadline rejects with UpstreamTimeoutError');
});

t.test('HTTP errors reject with UpstreamError', async (tt) => {
  for (const status of [500, 404]) {
    const server = await fixture(tt, () => ({ status, error: `scripted failure ${status}` }));
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

t.test('an error line in the middle of a stream rejects with UpstreamError', async (tt) => {
  const server = await fixture(tt, () => ({ chunks: ['partial ', 'answer'], streamErrorAfter: 1, error: 'model runner has unexpectedly stopped' }));
  const tokens: string[] = [];
  const error = await failureOf(
    (async () => {
      for await (const chunk of modelAt(server).stream(user('hi'))) if (chunk.type === 'token') tokens.push(chunk.content);
    })(),
  );
  tt.ok(error instanceof UpstreamError, 'the stream rejects with UpstreamError');
  tt.notOk(error instanceof UpstreamTimeoutError, 'it is not reported as a timeout');
  tt.match((error as Error).message, 'model runner has unexpectedly stopped', 'the error line message is kept');
  tt.same(tokens, ['partial '], 'the tokens before the error line arrived');
});

t.test('an aborted signal stops the stream, and only that stream', async (tt) => {
  const words = Array.from({ length: 20 }, (_, i) => `w${i} `);
  const server = await fixture(tt, () => ({ chunks: words, chunkDelayMs: 50 }));
  const model = modelAt(server);
  const controller = new AbortController();
  const tokens: string[] = [];
  const started = Date.now();
  const other = collect(model.stream(user('a concurrent call on the same model')));
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
  const aborted = server.requests.findIndex((r) => r.body?.messages?.[0]?.content === 'long answer');
  tt.equal(await outcomeOf(server, aborted), 'disconnected', 'the HTTP request is dropped, so the server stops sending');
  tt.equal(tokensOf(await other).join(''), words.join(''), 'a concurrent call on the same model is not cut by the abort');

  const before = new AbortController();
  before.abort();
  const options: ChatCallOptions = { signal: before.signal };
  const sent = server.requests.length;
  await tt.rejects(model.invoke(user('x'), options), { name: 'AbortError' }, 'invoke with an already aborted signal rejects with AbortError');
  await tt.rejects(collect(model.stream(user('x'), options)), { name: 'AbortError' }, 'stream with an already aborted signal rejects with AbortError');
  tt.equal(server.requests.length, sent, 'an already aborted call sends no request');
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
