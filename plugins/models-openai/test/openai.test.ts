// The `openai` model provider of models-openai (the official openai SDK) against the OpenAI-compatible fixture server,
// which speaks the real wire protocol: the cases every provider passes, the OpenAI cases it shares with
// models-langchain's provider, and what is its own (Azure OpenAI, the SDK's environment variables, the conformance
// suite).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';
import { UpstreamError, type ModelProvider } from '@agent-host/sdk';
import { modelProviderConformance } from '@agent-host/sdk/testing';
import OpenAI from 'openai';
import t from 'tap';
import modelsOpenAi from '@agent-host/plugin-models-openai';
import { collect, failureOf, providersFromPlugin, setEnvFor, specFor, streamTokensInto, tokensOf, user } from '../../../test/helpers/model-provider.js';
import { fixtureModel, openAiFixture as fixture, openAiProviderContract } from '../../../test/helpers/openai-provider-contract.js';
import type { OpenAiFixture } from '../../../test/fixtures/openai-server.js';
import { OpenAiSdkProvider } from '../src/lib/openai-sdk-provider.js';

const spec = specFor('gpt-4o-mini');
const modelAt = fixtureModel((options) => new OpenAiSdkProvider(options));

/** The provider the plugin's package entry registers with `config`. */
const pluginProvider = async (config: Record<string, unknown>, deps: Parameters<typeof providersFromPlugin>[1] = {}): Promise<ModelProvider> =>
  (await providersFromPlugin(config, { ...deps, plugin: modelsOpenAi })).get('openai')!;

openAiProviderContract(t, {
  providerAt: (options) => new OpenAiSdkProvider(options),
  provider: (baseUrl, keyEnv, deps) => pluginProvider({ base_url: baseUrl, ...(keyEnv && { api_key_env: keyEnv }) }, deps),
  cacheKeys: (provider) => [...(provider as unknown as { clients: Map<string, unknown> }).clients.keys()],
});

t.test('the provider keeps every rule of the model provider conformance suite', async (t) => {
  const server = await fixture(t, () => ({ content: 'Parcels ship within two days.' }));
  const provider = await pluginProvider({ base_url: server.url });
  for (const rule of modelProviderConformance(provider, spec())) await t.test(rule.rule, async () => rule.check());
});

t.test('below its own keys, the plugin reads OPENAI_BASE_URL and OPENAI_API_KEY as the openai SDK does', async (tt) => {
  const fromEnv = await fixture(tt, () => ({ content: 'from OPENAI_BASE_URL' }));
  const fromConfig = await fixture(tt, () => ({ content: 'from base_url' }));
  setEnvFor(tt, { OPENAI_BASE_URL: fromEnv.url, OPENAI_API_KEY: 'sk-from-the-environment' });
  const byEnvironment = await pluginProvider({});
  tt.equal(
    (await byEnvironment.createChatModel(spec()).invoke(user('where?'))).content,
    'from OPENAI_BASE_URL',
    'without base_url, OPENAI_BASE_URL is the endpoint',
  );
  tt.equal(fromEnv.requests[0]?.headers.authorization, 'Bearer sk-from-the-environment', 'without api_key_env, OPENAI_API_KEY is the key');
  const byConfig = await pluginProvider({ base_url: fromConfig.url });
  tt.equal((await byConfig.createChatModel(spec()).invoke(user('where?'))).content, 'from base_url', 'base_url wins over OPENAI_BASE_URL');
  tt.equal(fromEnv.requests.length, 1, 'the environment endpoint got nothing more');
});

t.test('Azure OpenAI: an entry with options.azure_api_version calls its deployment with the api-key header', async (tt) => {
  const server = await fixture(tt, () => ({ content: 'from Azure', usage: { prompt_tokens: 5, completion_tokens: 2 } }));
  const keyEnv = `AGENT_HOST_TEST_AZURE_KEY_${process.pid}`;
  setEnvFor(tt, { [keyEnv]: 'azure-secret' });
  const provider = await pluginProvider({});
  const azure = spec({ model_name: 'gpt-4o', options: { base_url: server.url.replace(/\/v1$/, ''), azure_api_version: '2024-10-21', api_key_env: keyEnv } });
  tt.same(provider.availability!(azure), { available: true }, 'an Azure entry with its key is available');
  const completion = await provider.createChatModel(azure).invoke(user('hello'));
  tt.same([completion.content, completion.usage], ['from Azure', { input_tokens: 5, output_tokens: 2 }], 'the answer and its usage come back');
  const streamed = await collect(provider.createChatModel({ ...azure, options: { ...azure.options, azure_deployment: 'prod-4o' } }).stream(user('hello')));
  tt.equal(tokensOf(streamed).join(''), 'from Azure', 'a stream from a named deployment works too');
  tt.same(
    server.requests.map((r) => [r.path, r.query['api-version'], r.headers['api-key']]),
    [
      ['/openai/deployments/gpt-4o/chat/completions', '2024-10-21', 'azure-secret'],
      ['/openai/deployments/prod-4o/chat/completions', '2024-10-21', 'azure-secret'],
    ],
    "each request goes to its deployment's path with the API version and the key in api-key",
  );
  const keyless = spec({ options: { base_url: server.url, azure_api_version: '2024-10-21', api_key_env: `${keyEnv}_UNSET` } });
  tt.equal(provider.availability!(keyless).available, false, 'an Azure entry without its key is unavailable');
});

t.test('a tool call whose arguments are not JSON fails the call, naming the tool', async (tt) => {
  const server = await fixture(tt, () => ({ tool_calls: [{ name: 'get_weather', arguments: '{"city": "Par' }] }));
  const tools = [{ name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object' } }];
  const model = modelAt(server);
  for (const outcome of [await failureOf(model.invoke(user('weather?'), { tools })), await failureOf(collect(model.stream(user('weather?'), { tools })))]) {
    tt.ok(outcome instanceof UpstreamError, 'the call rejects with UpstreamError');
    tt.match((outcome as Error).message, /the model called get_weather with arguments that are not JSON/);
  }
});

t.test("a streamed answer's events are read as the openai SDK reads them", async (tt) => {
  const chunk = (delta: Record<string, unknown>, usage?: Record<string, number>) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: usage ? [] : [{ index: 0, delta }], ...(usage && { usage }) })}\n\n`;
  const bodies: Record<string, string[]> = {
    // Every event in one write, as a fast model's reply often arrives; what follows [DONE] is not read.
    'one read': [
      `${chunk({ content: 'a' })}${chunk({ content: 'b' })}${chunk({}, { prompt_tokens: 3, completion_tokens: 2 })}data: [DONE]\n\n${chunk({ content: 'x' })}`,
    ],
    // An event split over reads, and a last event the body ends without its blank line or [DONE].
    'split and unterminated': [chunk({ content: 'a' }).slice(0, 20), `${chunk({ content: 'a' }).slice(20)}: keep-alive\n\n`, chunk({ content: 'b' }).trimEnd()],
    // Lines may end in CRLF, as the SSE format allows.
    crlf: [`${chunk({ content: 'a' })}${chunk({ content: 'b' })}data: [DONE]\n\n`.replaceAll('\n', '\r\n')],
    'error event': [chunk({ content: 'a' }), 'data: {"error": {"message": "the server is overloaded", "type": "server_error"}}\n\n', chunk({ content: 'b' })],
  };
  // The user's message names the body the server streams, a write at a time.
  const server = http.createServer(async (req, res) => {
    const request = JSON.parse(await text(req)) as { messages: { content: string }[] };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const parts = [...bodies[request.messages[0]!.content]!];
    const next = (): unknown => (parts.length > 0 ? res.write(parts.shift(), () => setTimeout(next, 5)) : res.end());
    next();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tt.teardown(() => server.close());
  const model = modelAt({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` } as OpenAiFixture);

  const whole = await collect(model.stream(user('one read')));
  tt.same(tokensOf(whole), ['a', 'b'], 'each event of one read is a token, and nothing after [DONE]');
  tt.same(whole.at(-1), { type: 'usage', usage: { input_tokens: 3, output_tokens: 2 } }, 'the usage event is read');
  tt.same(tokensOf(await collect(model.stream(user('split and unterminated')))), ['a', 'b'], 'an event split over reads and an unterminated last one are read');
  tt.same(tokensOf(await collect(model.stream(user('crlf')))), ['a', 'b'], 'lines ending in CRLF are read');
  const into: string[] = [];
  const failure = await streamTokensInto(model, user('error event'), into);
  tt.ok(failure instanceof UpstreamError, 'an error event fails the call');
  tt.match((failure as Error).message, /the server is overloaded/, "with the server's message");
  tt.same(into, ['a'], 'the tokens before it were streamed, none after');
});

t.test("a client's request is built by the SDK once, and each call sends it with its own body", async (tt) => {
  const server = await fixture(tt, () => ({ content: 'ok' }));
  const built: string[] = [];
  const { buildRequest } = OpenAI.prototype;
  OpenAI.prototype.buildRequest = function (this: OpenAI, ...args: Parameters<typeof buildRequest>) {
    built.push(args[0].path);
    return buildRequest.apply(this, args);
  };
  tt.teardown(() => void (OpenAI.prototype.buildRequest = buildRequest));
  const model = modelAt(server);
  for (const question of ['first', 'second', 'third']) {
    tt.equal((await model.invoke(user(question))).content, 'ok');
    tt.same(tokensOf(await collect(model.stream(user(`${question}, streamed`)))).join(''), 'ok');
  }
  tt.same(built, ['/chat/completions'], 'six calls, one request built');
  tt.same(
    server.requests.map((r) => [r.method, r.path, r.body.messages[0].content, r.body.stream ?? false]),
    ['first', 'second', 'third'].flatMap((q) => [
      ['POST', '/v1/chat/completions', q, false],
      ['POST', '/v1/chat/completions', `${q}, streamed`, true],
    ]),
    'each with its own body',
  );
  // What the SDK sends itself for the same body: every header it sets is sent alike.
  const sdk = new OpenAI({ apiKey: 'sk-fixture', baseURL: server.url, maxRetries: 0 });
  await sdk.chat.completions.create(server.requests[0]!.body);
  const [ours, its] = [server.requests[0]!, server.requests.at(-1)!];
  const set = Object.keys(its.headers).filter(
    (name) => name === 'authorization' || name === 'accept' || name === 'content-type' || /^(x-stainless|openai-|user-agent)/.test(name),
  );
  tt.ok(set.includes('authorization') && set.includes('x-stainless-lang'), 'the key and the SDK headers are compared');
  tt.same(
    Object.fromEntries(set.map((name) => [name, ours.headers[name]])),
    Object.fromEntries(set.map((name) => [name, its.headers[name]])),
    "the SDK's headers, as it sends them",
  );
});
