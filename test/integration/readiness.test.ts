import { createServer } from 'node:net';
import t from 'tap';
import { AdminClient, getJson, startTestHost } from '../helpers/host.js';

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test('/readyz is 200 while the database, job store and vector store answer', async (t) => {
  const host = await startTestHost(t);
  t.same(await getJson(host, '/readyz'), { status: 200, body: { status: 'ready', failing: [] } });
});

t.test('/readyz is 503 naming the failing dependency while /healthz stays the liveness answer', async (t) => {
  const host = await startTestHost(t, { env: { CHROMA_URL: `http://127.0.0.1:${await closedPort()}` } });
  const ready = await getJson(host, '/readyz');
  t.equal(ready.status, 503, 'a load balancer stops sending traffic here');
  t.equal(ready.body.status, 'not_ready');
  t.same(
    ready.body.failing.map((f: { name: string }) => f.name),
    ['chroma'],
    'only the vector store fails',
  );
  const live = await getJson(host, '/healthz');
  t.equal(live.status, 200, 'the process is alive');
  t.equal(live.body.guard_state, 'failed', '/healthz reports the failure in guard_state');
});

t.test('GET /plugins lists the loaded plugins to holders of dashboard.read', async (t) => {
  const host = await startTestHost(t);
  t.equal((await getJson(host, '/plugins')).status, 401, 'anonymous callers are refused');
  const admin = new AdminClient(host.url);
  await admin.login();
  const { status, body } = await admin.request('GET', '/plugins');
  t.equal(status, 200);
  const tools = body.items.find((p: { id: string }) => p.id === 'tools-mcp');
  t.match(
    tools,
    { origin: 'first-party', sdk: '^1.5.0', registered: { toolBackends: ['stdio', 'http_sse'] } },
    'each plugin with its origin, SDK range and registrations',
  );
  t.ok(tools.version && tools.location, 'and its version and location');
  const langchain = body.items.find((p: { id: string }) => p.id === 'models-langchain');
  t.same(langchain.replaced, { modelProviders: { openai: 'models-openai' } }, "a default another plugin serves instead, and that plugin's id");
  t.same(tools.replaced, {}, 'none for a plugin whose keys all serve');
  const chroma = body.items.find((p: { id: string }) => p.id === 'retriever-chroma');
  t.ok(chroma.health.length > 0 && chroma.health.every((h: { state: string }) => h.state === 'ok'), 'and the results of its own health checks');
});
