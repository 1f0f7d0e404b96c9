// The `openai` embedder of the embedders plugin against a fixture speaking
// the OpenAI embeddings wire format (test/fixtures/openai-embeddings-server.ts):
// the request, batching, ordering, vector checks, retries and failures.
import { extensionPoints, UpstreamError, UpstreamTimeoutError, type Embedder } from '@agent-host/sdk';
import t from 'tap';
import { embedderConformance } from '@agent-host/sdk/testing';
import { fixtureVector, startOpenAiEmbeddingsFixture, type EmbeddingsFixture, type EmbeddingsReply } from '../../../test/fixtures/openai-embeddings-server.js';
import type { Respond } from '../../../test/fixtures/fixture-server.js';
import { loadFirstPartyPlugin } from '../../../test/helpers/first-party-plugin.js';
import { recordingHttp } from '../../../test/helpers/http-client.js';

const KEY_ENV = 'TEST_EMBEDDINGS_API_KEY';

async function fixture(t: { teardown(fn: () => Promise<void>): void }, respond?: Respond<EmbeddingsReply>): Promise<EmbeddingsFixture> {
  const server = await startOpenAiEmbeddingsFixture(respond ? { respond } : {});
  t.teardown(() => server.close());
  return server;
}

/** The `openai` embedder pointed at `server`, with 8-dimensional vectors unless `config` says otherwise. */
async function embedderAt(server: EmbeddingsFixture, config: Record<string, unknown> = {}, http = recordingHttp()): Promise<Embedder> {
  const kernel = await loadFirstPartyPlugin(
    'embedders',
    {
      openai_base_url: server.url,
      openai_model: 'embed-small',
      openai_dim: 8,
      openai_api_key_env: KEY_ENV,
      ...config,
    },
    { 'core.http': http },
  );
  return kernel.registry(extensionPoints.embedders).get('openai')!;
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

function withKey(t: { teardown(fn: () => void): void }, key: string) {
  process.env[KEY_ENV] = key;
  t.teardown(() => void delete process.env[KEY_ENV]);
}

t.test('embed posts {model, input, encoding_format} to <base_url>/embeddings with the bearer key and returns the vectors', async (t) => {
  const server = await fixture(t);
  withKey(t, 'sk-embed');
  const http = recordingHttp();
  const embedder = await embedderAt(server, {}, http);
  const vectors = await embedder.embed(['first text', 'second text']);
  const [request] = server.requests;
  t.equal(request?.path, '/v1/embeddings', 'the path is the base URL plus /embeddings');
  t.same(
    request?.body,
    { model: 'embed-small', input: ['first text', 'second text'], encoding_format: 'float' },
    'the body names the model, the inputs and float encoding, and no dimensions',
  );
  t.equal(request?.headers.authorization, 'Bearer sk-embed', 'the key comes from the variable openai_api_key_env names');
  t.same(vectors, [fixtureVector('first text', 8), fixtureVector('second text', 8)], 'one vector per input, in input order');
  t.same(embedder.describe(), { backend_type: 'openai', provider: 'openai', model: 'embed-small', dim: 8 }, 'describe() reports the configured model and size');
  t.same(http.fetched, [`${server.url}/embeddings`], "the request went through the host's HTTP client (coreServices.http)");
});

t.test('without a key no Authorization header is sent (local OpenAI-compatible servers need none)', async (t) => {
  const server = await fixture(t);
  await (await embedderAt(server)).embed(['x']);
  t.equal(server.requests[0]?.headers.authorization, undefined, 'no key, no Authorization header');
});

t.test('openai_send_dimensions asks the model for vectors of openai_dim', async (t) => {
  const server = await fixture(t);
  const vectors = await (await embedderAt(server, { openai_send_dimensions: true, openai_dim: 4 })).embed(['x']);
  t.equal(server.requests[0]?.body.dimensions, 4, 'dimensions is sent');
  t.equal(vectors[0]?.length, 4, 'and the shortened vectors are accepted');
});

t.test('texts go in batches of openai_batch_size, one request at a time, and come back in input order', async (t) => {
  let inFlight = 0;
  let maxInFlight = 0;
  const server = await fixture(t, async () => {
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    await new Promise((resolve) => setTimeout(resolve, 20));
    inFlight--;
    return { reversed: true };
  });
  const texts = ['a', 'b', 'c', 'd', 'e'];
  const vectors = await (await embedderAt(server, { openai_batch_size: 2 })).embed(texts);
  t.same(
    server.bodies.map((b) => b.input),
    [['a', 'b'], ['c', 'd'], ['e']],
    'batches of two, the rest in the last',
  );
  t.equal(maxInFlight, 1, 'batches are sent one after another');
  t.same(
    vectors,
    texts.map((text) => fixtureVector(text, 8)),
    'vectors are ordered by each item’s index, not by the order the server listed them',
  );
});

t.test('no texts, no request', async (t) => {
  const server = await fixture(t);
  t.same(await (await embedderAt(server)).embed([]), [], 'an empty batch embeds to nothing');
  t.equal(server.requests.length, 0, 'and sends no request');
});

t.test('vectors of another length than openai_dim are refused, naming the setting to fix', async (t) => {
  const server = await fixture(t, () => ({ dim: 1536 }));
  const error = await rejection((await embedderAt(server)).embed(['x']));
  t.type(error, UpstreamError, 'a wrong-sized vector is an upstream fault');
  t.match((error as Error).message, /returned 1536-dimensional vectors, but openai_dim is 8/, 'the message gives both sizes and the setting');
});

t.test('an answer with fewer vectors than inputs is refused', async (t) => {
  const server = await fixture(t, () => ({ embeddings: [fixtureVector('only one', 8)] }));
  const error = await rejection((await embedderAt(server)).embed(['x', 'y']));
  t.match((error as Error).message, /returned 1 embeddings for 2 inputs/, 'a short answer is refused, not padded');
});

t.test('a refused key is an upstream error that names the unset variable', async (t) => {
  const server = await fixture(t, () => ({ status: 401, error: { message: 'Incorrect API key provided.' } }));
  const error = await rejection((await embedderAt(server)).embed(['x']));
  t.type(error, UpstreamError, 'a refused key is an upstream fault');
  t.match(
    (error as Error).message,
    new RegExp(`refused the API key \\(${KEY_ENV} is not set\\) \\(401\\): Incorrect API key provided\\.`),
    'the message says the key was refused and which variable is unset',
  );
  t.equal(server.requests.length, 1, 'a 401 is not retried');
});

t.test('a 400 carries the server’s message and the model, without retries', async (t) => {
  const server = await fixture(t, () => ({ status: 400, error: { message: 'This model does not support embeddings.' } }));
  const error = await rejection((await embedderAt(server)).embed(['x']));
  t.match(
    (error as Error).message,
    /answered 400 for model "embed-small": This model does not support embeddings\./,
    'the message carries the status, the model and the server’s message',
  );
  t.equal(server.requests.length, 1, 'a 400 is not retried');
});

t.test('429 and 5xx are retried up to openai_max_retries times, honouring retry-after', async (t) => {
  let calls = 0;
  const server = await fixture(t, () => (++calls === 1 ? { status: 429, headers: { 'retry-after': '0.05' } } : {}));
  const vectors = await (await embedderAt(server)).embed(['x']);
  t.equal(server.requests.length, 2, 'the rate-limited request was sent again');
  t.same(vectors, [fixtureVector('x', 8)], 'and its answer returned');
  const failing = await fixture(t, () => ({ status: 503, error: { message: 'overloaded' } }));
  const error = await rejection((await embedderAt(failing, { openai_max_retries: 1 })).embed(['x']));
  t.equal(failing.requests.length, 2, 'one try plus openai_max_retries');
  t.match((error as Error).message, /answered 503 .*overloaded/, 'the last failure is reported');
});

t.test('a request slower than openai_timeout_seconds is an UpstreamTimeoutError', async (t) => {
  const server = await fixture(t, () => ({ delayMs: 2_000 }));
  const started = Date.now();
  const error = await rejection((await embedderAt(server, { openai_timeout_seconds: 0.2, openai_max_retries: 0 })).embed(['x']));
  t.type(error, UpstreamTimeoutError, 'the deadline is an UpstreamTimeoutError');
  t.match((error as Error).message, /timed out after 200 ms/, 'the message gives the deadline');
  t.ok(Date.now() - started < 1_500, 'it fails at the deadline');
});

t.test('aborting the signal ends the request with the caller’s reason and closes the connection', async (t) => {
  const server = await fixture(t, () => ({ delayMs: 3_000 }));
  const embedder = await embedderAt(server);
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('ingestion cancelled')), 100);
  const error = await rejection(embedder.embed(['x'], { signal: controller.signal }));
  t.match(error, { message: 'ingestion cancelled' }, 'the caller’s abort reason is thrown');
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(server.requests[0]?.outcome, 'disconnected', 'the server saw the client go away');
});

t.test('an unreachable endpoint is an upstream error naming the URL', async (t) => {
  const server = await fixture(t);
  await server.close();
  const error = await rejection((await embedderAt(server, { openai_max_retries: 0 })).embed(['x']));
  t.type(error, UpstreamError, 'an unreachable endpoint is an upstream fault');
  t.match((error as Error).message, `cannot reach the embeddings endpoint ${server.url}/embeddings`);
});

t.test('the openai embedder keeps every rule of the embedder conformance suite (@agent-host/sdk/testing)', async (t) => {
  const server = await fixture(t);
  withKey(t, 'sk-embed');
  for (const rule of embedderConformance(await embedderAt(server))) await t.test(rule.rule, async () => rule.check());
});
