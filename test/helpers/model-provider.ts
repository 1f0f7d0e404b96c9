// Shared pieces of the model-provider tests (plugins/models-langchain/test/{openai,anthropic,ollama}.test.ts and the
// conformance test): a recording logger, fixture and ChatModel builders, stream helpers, the plugin's package entry
// booted in startTestKernel, and `providerContract`, the cases every provider must pass
// against its wire-protocol fixture server (streaming without buffering,
// deadlines, HTTP and mid-stream errors, aborts).
import { randomBytes } from 'node:crypto';
import {
  coreServices,
  extensionPoints,
  type AgentHostPlugin,
  UpstreamError,
  UpstreamTimeoutError,
  type ChatCallOptions,
  type ChatMessage,
  type ChatModel,
  type ChatModelSpec,
  type ChatStreamChunk,
  type HttpClient,
  type Logger,
  type ModelProvider,
  type SecretsService,
} from '@agent-host/sdk';
import { createSecrets } from '../../core/src/services/secrets.js';
import modelsPlugin from '@agent-host/plugin-models-langchain';
import { startTestKernel } from '@agent-host/sdk/testing';
import type { FixtureServer, Respond, ScriptedReply } from '../fixtures/fixture-server.js';
import { recordingHttp } from './http-client.js';

/** What the helpers need of a tap test. */
export interface Test {
  teardown(fn: () => Promise<void> | void): void;
}

/** The slice of a tap test the shared cases assert with. */
type Assertions = Test & {
  ok(value: unknown, message: string): void;
  notOk(value: unknown, message: string): void;
  equal(found: unknown, wanted: unknown, message: string): void;
  same(found: unknown, wanted: unknown, message: string): void;
  match(found: unknown, pattern: unknown, message: string): void;
  rejects(promise: Promise<unknown>, expected: object, message: string): Promise<unknown>;
};

/** What `providerContract` needs of the tap root. */
interface Suite {
  test(name: string, fn: (tt: any) => Promise<void>): unknown;
}

export interface RecordingLogger extends Logger {
  warnings: unknown[];
}

/** A logger that drops everything but keeps the warnings for assertions. */
export function recordingLogger(): RecordingLogger {
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

/** Starts a fixture server with `respond` (when given) and closes it when `tt` ends. */
export async function startedFixture<Reply, Server extends FixtureServer<Reply>>(
  tt: Test,
  start: (options: { respond?: Respond<Reply> }) => Promise<Server>,
  respond?: Respond<Reply>,
): Promise<Server> {
  const server = await start(respond ? { respond } : {});
  tt.teardown(() => server.close());
  return server;
}

/** A spec builder: the catalog entry for `model_name`, with a 5 s timeout and no options, plus overrides. */
export const specFor =
  (model_name: string) =>
  (overrides: Partial<ChatModelSpec> = {}): ChatModelSpec => ({
    model_name,
    temperature: null,
    timeoutMs: 5_000,
    options: {},
    ...overrides,
  });

/** Builds the ChatModel `provider` makes for `spec`. */
export const chatModel = (provider: ModelProvider, spec: ChatModelSpec): ChatModel => provider.createChatModel(spec);

export async function collect(stream: AsyncIterable<ChatStreamChunk>): Promise<ChatStreamChunk[]> {
  const chunks: ChatStreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The rejection reason of `promise`, or `undefined` when it resolves. */
export const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

export const tokensOf = (chunks: ChatStreamChunk[]) => chunks.flatMap((c) => (c.type === 'token' ? [c.content] : []));
export const user = (content: string): ChatMessage[] => [{ role: 'user', content }];

/** Streams `messages`, pushing each token into `into` as it arrives. */
export async function streamTokens(model: ChatModel, messages: ChatMessage[], into: string[], options?: ChatCallOptions): Promise<void> {
  for await (const chunk of model.stream(messages, options)) if (chunk.type === 'token') into.push(chunk.content);
}

/** `streamTokens`, resolving to the failure, if any. */
export const streamTokensInto = (model: ChatModel, messages: ChatMessage[], into: string[], options?: ChatCallOptions) =>
  failureOf(streamTokens(model, messages, into, options));

/** The outcome of request `index` once it is settled (or after 2 s). */
export async function outcomeOf(server: Pick<FixtureServer<unknown>, 'requests'>, index: number) {
  const until = Date.now() + 2_000;
  while (server.requests[index]?.outcome === 'pending' && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  return server.requests[index]?.outcome;
}

/** Sets environment variables for the rest of `tt`, restoring (or removing) them when it ends. */
export function setEnvFor(tt: Test, vars: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  Object.assign(process.env, vars);
  tt.teardown(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

/**
 * The providers a plugin's package entry (`plugin`, models-langchain's by default) registers with `config`, booted in
 * startTestKernel; `secrets` defaults to core's under a fresh key, `log` to a recording logger.
 */
export async function providersFromPlugin(
  config: Record<string, unknown>,
  {
    secrets = createSecrets(randomBytes(32)),
    log = recordingLogger(),
    plugin = modelsPlugin,
  }: { secrets?: SecretsService | undefined; log?: Logger | undefined; plugin?: AgentHostPlugin } = {},
): Promise<Map<string, ModelProvider>> {
  const kernel = await startTestKernel({
    plugins: [plugin],
    config: { [plugin.id]: config },
    services: [
      [coreServices.secrets, secrets],
      [coreServices.logger, log],
      [coreServices.http, recordingHttp()],
    ],
  });
  return new Map(kernel.keys(extensionPoints.modelProviders).map((key) => [key, kernel.get(extensionPoints.modelProviders, key)]));
}

/** One provider against its fixture server, as the shared cases drive it. */
export interface ProviderHarness<Reply extends ScriptedReply, Server extends FixtureServer<Reply>> {
  fixture(tt: Test, respond?: Respond<Reply>): Promise<Server>;
  modelAt(server: Server, overrides?: Partial<ChatModelSpec>, log?: Logger, http?: HttpClient): ChatModel;
  /** Frames (events or lines) the fixture streams before the third of four tokens. */
  framesBeforeThirdToken: number;
  /** Statuses the "HTTP errors" case scripts. */
  errorStatuses: number[];
  /** A reply failing with `status` and an error body carrying `message`. */
  errorReply(status: number, message: string): Reply;
  /** Checks on the request a plain stream() sent (wire shape, path, …). */
  checkStreamRequest(tt: Assertions, server: Server): void;
  /** When the protocol has mid-stream errors: what one frame is called and a reply sending one after `partial `. */
  midStreamError?: { frame: string; reply: Reply; message: string };
}

/** The cases every provider must pass; registered on `t` in the calling test file. */
export function providerContract<Reply extends ScriptedReply, Server extends FixtureServer<Reply>>(t: Suite, h: ProviderHarness<Reply, Server>): void {
  t.test('stream yields tokens in order as they arrive, without buffering the reply', async (tt: Assertions) => {
    const pieces = ['The ', 'quick ', 'brown ', 'fox ', 'jumps.'];
    let firstTokenSeen = false;
    let releaseLast!: () => void;
    const firstTokenObserved = new Promise<void>((resolve) => (releaseLast = resolve));
    let firstTokenSeenBeforeLastSent: boolean | undefined;
    const server = await h.fixture(
      tt,
      () =>
        ({
          chunks: pieces,
          beforeChunk: async (index: number, total: number) => {
            if (index !== total - 1) return;
            // Hold the last frame back until the client has seen a token (or 2 s pass,
            // so a buffering client still finishes and the assertion below fails).
            await Promise.race([firstTokenObserved, new Promise((r) => setTimeout(r, 2_000))]);
            firstTokenSeenBeforeLastSent = firstTokenSeen;
          },
        }) as Reply,
    );
    const tokens: string[] = [];
    const http = recordingHttp();
    for await (const chunk of h.modelAt(server, {}, recordingLogger(), http).stream(user('say something'))) {
      if (chunk.type !== 'token') continue;
      tokens.push(chunk.content);
      if (!firstTokenSeen) {
        firstTokenSeen = true;
        releaseLast();
      }
    }
    tt.same(tokens, pieces, 'each streamed content delta becomes one token chunk, in the order the server sent them');
    tt.equal(firstTokenSeenBeforeLastSent, true, 'the first token reaches the caller before the server has sent the end of the stream');
    tt.ok(
      http.fetched.length > 0 && http.fetched.every((url) => url.startsWith(server.url)),
      "the request went through the host's HTTP client (coreServices.http)",
    );
    h.checkStreamRequest(tt, server);
  });

  t.test('a request slower than timeoutMs rejects with UpstreamTimeoutError', async (tt: Assertions) => {
    const server = await h.fixture(tt, () => ({ content: 'too late', delayMs: 3_000 }) as Reply);
    const model = h.modelAt(server, { timeoutMs: 200 });

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

  t.test('the deadline bounds the whole stream: a stream that stalls after headers times out', async (tt: Assertions) => {
    const server = await h.fixture(tt, () => ({ chunks: ['a ', 'b ', 'c ', 'd'], stallAfter: h.framesBeforeThirdToken }) as Reply);
    const model = h.modelAt(server, { timeoutMs: 400 });
    const seen: string[] = [];
    const started = Date.now();
    const error = await streamTokensInto(model, user('hi'), seen);
    tt.ok(error instanceof UpstreamTimeoutError, 'the stalled stream rejects with UpstreamTimeoutError');
    tt.same(seen, ['a ', 'b '], 'the tokens sent before the stall arrived');
    tt.ok(Date.now() - started < 2_000, 'the stream gives up at the deadline');
    tt.equal(await outcomeOf(server, 0), 'disconnected', 'the HTTP request is dropped at the deadline, not left open');

    const slowChunks = await h.fixture(tt, () => ({ chunks: ['a ', 'b ', 'c ', 'd'], chunkDelayMs: 200 }) as Reply);
    const cut = await failureOf(collect(h.modelAt(slowChunks, { timeoutMs: 500 }).stream(user('hi'))));
    tt.ok(cut instanceof UpstreamTimeoutError, 'a stream that keeps sending but outlasts the deadline rejects with UpstreamTimeoutError');
  });

  t.test('HTTP errors reject with UpstreamError', async (tt: Assertions) => {
    for (const status of h.errorStatuses) {
      const server = await h.fixture(tt, () => h.errorReply(status, `scripted failure ${status}`));
      const log = recordingLogger();
      const model = h.modelAt(server, {}, log);

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

  const midStream = h.midStreamError;
  if (midStream) {
    t.test(`an error ${midStream.frame} in the middle of a stream rejects with UpstreamError`, async (tt: Assertions) => {
      const server = await h.fixture(tt, () => midStream.reply);
      const tokens: string[] = [];
      const error = await streamTokensInto(h.modelAt(server), user('hi'), tokens);
      tt.ok(error instanceof UpstreamError, 'the stream rejects with UpstreamError');
      tt.notOk(error instanceof UpstreamTimeoutError, 'it is not reported as a timeout');
      tt.match((error as Error).message, midStream.message, `the error ${midStream.frame} message is kept`);
      tt.same(tokens, ['partial '], `the tokens before the error ${midStream.frame} arrived`);
    });
  }

  t.test('an aborted signal stops the stream, and only that stream', async (tt: Assertions) => {
    const words = Array.from({ length: 20 }, (_, i) => `w${i} `);
    const server = await h.fixture(tt, () => ({ chunks: words, chunkDelayMs: 50 }) as Reply);
    const model = h.modelAt(server);
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
    const aborted = server.requests.findIndex((r) => JSON.stringify(r.body?.messages ?? []).includes('long answer'));
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

  t.test('an aborted signal stops a pending invoke', async (tt: Assertions) => {
    const server = await h.fixture(tt, () => ({ content: 'late', delayMs: 3_000 }) as Reply);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const error = await failureOf(h.modelAt(server).invoke(user('x'), { signal: controller.signal }));
    tt.equal((error as Error | undefined)?.name, 'AbortError', 'invoke rejects with AbortError when its signal aborts');
    tt.ok(Date.now() - started < 2_000, 'invoke stops at the abort, not when the server answers');
  });
}
