import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { AdminClient, getJson, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

/** GET as the bootstrap super admin. */
async function adminGet(host: { url: string }, pathname: string) {
  const admin = new AdminClient(host.url);
  await admin.login();
  return admin.request('GET', pathname);
}

const helloPlugin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/plugins/hello-orchestrator');

t.test('default host', async (t) => {
  const host = await startTestHost(t, { env: { OBSERVABILITY_RELEASE: 'build-42', RELEASE_COMMIT_SUBJECT: 'Fix things' } });

  t.test('/healthz reports every field of spec 4.1 with no credentials', async (t) => {
    const { status, body } = await getJson(host, '/healthz');
    t.equal(status, 200);
    t.same(Object.keys(body).sort(), ['app_env', 'app_instance', 'database_fingerprint', 'guard_messages', 'guard_mode', 'guard_state', 'status']);
    t.equal(body.status, 'ok');
    t.equal(body.app_env, 'test');
    t.equal(body.guard_mode, 'warn', 'guards warn outside production');
    t.equal(body.guard_state, 'ok', 'Postgres, job store, Chroma and plugins are healthy');
    t.same(body.guard_messages, []);
    t.match(body.database_fingerprint, /^[0-9a-f]{16}$/);
    const url = new URL(host.databaseUrl);
    t.notMatch(JSON.stringify(body), url.password, 'the database password never appears');
    t.notMatch(JSON.stringify(body), url.username + ':', 'the database user never appears');
  });

  t.test('app_instance is the row this process wrote to host_instances', async (t) => {
    const { body } = await getJson(host, '/healthz');
    const rows = await query(host.databaseUrl, 'SELECT id, stopped_at FROM host_instances');
    t.same(
      rows.map((r) => r.id),
      [body.app_instance],
    );
    t.equal(rows[0]!.stopped_at, null);
  });

  t.test('/chat-orchestrators is read from the registry: core_chat_v1 default, react_agent_v1 experimental', async (t) => {
    t.equal((await getJson(host, '/chat-orchestrators')).status, 401, 'behind login (spec 5.6 does not make it public)');
    const { status, body } = await adminGet(host, '/chat-orchestrators');
    t.equal(status, 200);
    t.equal(body.default_orchestrator_key, 'core_chat_v1');
    t.same(
      body.items.map((o: any) => [o.key, o.is_default, o.experimental]),
      [
        ['core_chat_v1', true, false],
        ['react_agent_v1', false, true],
      ],
    );
    for (const item of body.items) {
      t.ok(item.display_name && item.description, `${item.key} has a display name and description`);
    }
  });

  t.test('/models lists the catalog with description, category and the default', async (t) => {
    const { status, body } = await getJson(host, '/models');
    t.equal(status, 200);
    t.same(body.default_model, { model_provider: 'offline', model_name: 'offline-extractive' });
    const offline = body.models.find((m: any) => m.model_provider === 'offline');
    t.equal(offline.is_default, true);
    t.equal(offline.offline, true, 'the offline provider is labelled as such');
    t.equal(offline.category, 'offline');
    t.match(offline.description, /not a language model/i);
    const openai = body.models.find((m: any) => m.model_provider === 'openai');
    t.equal(openai.is_default, false);
    for (const model of body.models) t.ok(model.description && model.category, `${model.model_name} has description and category`);
  });

  t.test('/models tells the truth: a hosted model without its API key is unavailable, with the reason', async (t) => {
    const saved = process.env.OPENAI_API_KEY;
    t.teardown(() => {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    });
    delete process.env.OPENAI_API_KEY;
    const without = (await getJson(host, '/models')).body.models.find((m: any) => m.model_provider === 'openai' && m.model_name === 'gpt-4o-mini');
    t.equal(without.available, false, 'api.openai.com without a key cannot be called');
    t.match(without.unavailable_reason, /no API key: set OPENAI_API_KEY/);
    process.env.OPENAI_API_KEY = 'sk-test-not-a-real-key';
    const withKey = (await getJson(host, '/models')).body.models.find((m: any) => m.model_provider === 'openai' && m.model_name === 'gpt-4o-mini');
    t.equal(withKey.available, true, 'with the key it is available');
    t.equal(withKey.unavailable_reason, null);
    const offline = (await getJson(host, '/models')).body.models.find((m: any) => m.model_provider === 'offline');
    t.equal(offline.available, true, 'the offline provider needs no key');
  });

  t.test('/models?check=true calls each available model once, for administrators only', async (t) => {
    t.equal((await getJson(host, '/models?check=true')).status, 401, 'anonymous callers may read the catalog but not spend calls');
    const admin = new AdminClient(host.url);
    await admin.login();
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    t.teardown(() => void (saved === undefined ? delete process.env.OPENAI_API_KEY : (process.env.OPENAI_API_KEY = saved)));
    const { status, body } = await admin.request('GET', '/models?check=true');
    t.equal(status, 200);
    const offline = body.models.find((m: any) => m.model_provider === 'offline');
    t.match(offline.check, { ok: true, error: null }, 'the offline model answers');
    t.type(offline.check.ms, 'number');
    const openai = body.models.find((m: any) => m.model_provider === 'openai');
    t.equal(openai.check, null, 'a model that is not available is not called');
  });

  t.test('/release-metadata is behind the permission hook', async (t) => {
    const { status, body } = await getJson(host, '/release-metadata');
    t.equal(status, 401);
    t.match(body, { detail: 'administrator login required', code: 'LOGIN_REQUIRED', request_id: String });
  });

  t.test("every response carries X-Request-Id: the caller's valid one is kept, else the host makes one", async (t) => {
    const made = await fetch(host.url + '/healthz');
    t.match(made.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'a generated id');
    const kept = await fetch(host.url + '/healthz', { headers: { 'x-request-id': 'lb-7f3a:42' } });
    t.equal(kept.headers.get('x-request-id'), 'lb-7f3a:42', 'an incoming id is kept');
    const refused = await fetch(host.url + '/no/such/route', { headers: { 'x-request-id': 'has spaces and <tags>' } });
    t.match(refused.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'an id that is not printable and short is replaced, errors included');
    const streamed = await fetch(host.url + '/stream', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'sse-1' },
      body: JSON.stringify({ thread_id: 'rid', message: 'hi' }),
    });
    t.equal(streamed.headers.get('x-request-id'), 'sse-1', 'the event stream too');
    await streamed.text();
  });

  t.test('unknown routes give a JSON 404 with detail', async (t) => {
    const response = await fetch(host.url + '/no/such/route');
    t.equal(response.status, 404);
    t.match(response.headers.get('content-type'), /application\/json/);
    t.match(await response.json(), { detail: 'no route for GET /no/such/route', code: 'ROUTE_NOT_FOUND', request_id: String });
  });
});

t.test('an idle keep-alive connection is left open past the 5 s at which Node would close it', async (t) => {
  const host = await startTestHost(t);
  const { hostname, port } = new URL(host.url);
  const socket = net.connect(Number(port), hostname);
  t.teardown(() => socket.destroy());
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  let closed = false;
  socket.on('close', () => (closed = true));
  const ask = async () => {
    received = '';
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`);
    for (const until = Date.now() + 5_000; !/\r\n\r\n[\s\S]*\}$/.test(received) && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
    return received.split('\r\n')[0];
  };
  t.equal(await ask(), 'HTTP/1.1 200 OK');
  await new Promise((r) => setTimeout(r, 6_000));
  t.notOk(closed, 'still open after 6 s idle');
  t.equal(await ask(), 'HTTP/1.1 200 OK', 'and a second request on it is answered');
});

t.test('release metadata follows APP_ENV rules', async (t) => {
  const host = await startTestHost(t, {
    env: { OBSERVABILITY_RELEASE: 'build-42', RELEASE_COMMIT_SUBJECT: 'Fix things', RELEASE_PUBLISHED_AT: '2026-11-01T00:00:00Z' },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const { status, body } = await admin.request('GET', '/release-metadata');
  t.equal(status, 200);
  t.same(
    body,
    {
      app_env: 'test',
      release_identifier: 'build-42',
      published_at: '2026-11-01T00:00:00Z',
      commit_sha: null,
      commit_subject: 'Fix things',
    },
    'outside production: commit facts, OBSERVABILITY_RELEASE when the sha is unset',
  );
});

t.test('disabling orchestrator-react-agent removes react_agent_v1', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST_PLUGINS_DISABLED: 'orchestrator-react-agent' } });
  const { body } = await adminGet(host, '/chat-orchestrators');
  t.same(
    body.items.map((o: any) => o.key),
    ['core_chat_v1'],
  );
});

t.test('disabling the default orchestrator is reported as a guard warning', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST_PLUGINS_DISABLED: 'orchestrator-core-chat' } });
  const { body } = await getJson(host, '/healthz');
  t.equal(body.guard_state, 'warning');
  t.match(body.guard_messages, [/\[agent\] default_orchestrator_key = "core_chat_v1", but no enabled plugin registers orchestrators "core_chat_v1"/]);
});

t.test('an optional plugin whose init fails is left out: the host serves with the others and says why on /healthz', async (t) => {
  const initThrows = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/plugins/kernel/init-throws');
  const host = await startTestHost(t, { env: { AGENT_HOST_PLUGINS_EXTRA: initThrows, AGENT_HOST_PLUGINS_OPTIONAL: 'init-throws' } });
  const { body } = await getJson(host, '/healthz');
  t.equal(body.guard_state, 'warning');
  t.match(body.guard_messages, [
    'plugin "init-throws" refused (init_failed): init threw: cannot reach the license server; it is in [plugins] optional, so the host runs without it',
  ]);
  t.notOk(
    host.app.kernel.plugins().some((p) => p.id === 'init-throws'),
    'it is not among the loaded plugins',
  );
  const orchestrators = await adminGet(host, '/chat-orchestrators');
  t.ok(
    orchestrators.body.items.some((o: { key: string }) => o.key === 'core_chat_v1'),
    'the default plugins serve',
  );
});

t.test('a third-party plugin loaded by path registers an orchestrator that /chat-orchestrators lists', async (t) => {
  const host = await startTestHost(t, {
    env: {
      AGENT_HOST__PLUGINS__ENABLED: JSON.stringify(['models-langchain', 'orchestrator-core-chat', 'orchestrator-react-agent', helloPlugin]),
    },
  });
  const { body } = await adminGet(host, '/chat-orchestrators');
  const hello = body.items.find((o: any) => o.key === 'hello_v1');
  t.ok(hello, 'hello_v1 is listed');
  t.equal(hello.plugin_id, 'hello-orchestrator');
  t.equal(hello.display_name, 'Hello');
  const info = host.app.kernel.plugins().find((p) => p.id === 'hello-orchestrator');
  t.equal(info?.origin, 'path');
  t.equal(info?.packageName, 'agent-host-plugin-hello');
});
