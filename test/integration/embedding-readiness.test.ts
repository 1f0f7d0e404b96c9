// POST /embedding-model/check-readiness (spec 4.1): backend_type, provider,
// model, dim and error info of the configured embedder, after a warm-up call.
import t from 'tap';
import { startOpenAiEmbeddingsFixture } from '../fixtures/openai-embeddings-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';

const check = async (env: Record<string, string>, t: { teardown(fn: () => Promise<void> | void): void }) => {
  const host = await startTestHost(t, { env });
  const admin = new AdminClient(host.url);
  await admin.login();
  return admin.request('POST', '/embedding-model/check-readiness');
};

t.test('the offline default is ready', async (t) => {
  const { status, body } = await check({}, t);
  t.equal(status, 200);
  t.match(body, { ready: true, backend_type: 'feature-hashing', provider: 'local', model: 'feature-hashing-v1', dim: 512, error: null });
  t.type(body.latency_ms, 'number');
});

t.test('an OpenAI-compatible embedder reports its model, and its failure as error info', async (t) => {
  const fixture = await startOpenAiEmbeddingsFixture({ respond: () => ({ dim: 8 }) });
  t.teardown(() => fixture.close());
  const env = {
    AGENT_HOST__KNOWLEDGE__EMBEDDER: '"openai"',
    AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_BASE_URL: `"${fixture.url}"`,
    AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_DIM: '8',
    AGENT_HOST__PLUGINS__EMBEDDERS__OPENAI_MAX_RETRIES: '0',
  };
  const ready = await check(env, t);
  t.match(ready.body, { ready: true, backend_type: 'openai', provider: 'openai', model: 'text-embedding-3-small', dim: 8, error: null });
  fixture.setRespond(() => ({ status: 503 }));
  const failing = await check(env, t);
  t.match(failing.body, { ready: false, backend_type: 'openai', model: 'text-embedding-3-small', dim: 8, error: { code: 'embedding_failed', message: /503/ } });
});

t.test('an embedder no plugin registers', async (t) => {
  const { body } = await check({ AGENT_HOST__KNOWLEDGE__EMBEDDER: '"missing-embedder"' }, t);
  t.match(body, {
    ready: false,
    backend_type: 'missing-embedder',
    provider: null,
    model: null,
    dim: null,
    error: { code: 'embedder_not_registered', message: /missing-embedder/ },
  });
});
