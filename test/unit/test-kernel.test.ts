// startTestKernel (@agent-host/sdk/testing) boots plugins as the host does, over fake services in memory: a
// first-party plugin through its package entry keeps its suite there, each way a plugin can be refused is refused
// with the host's reason, and what plugins do to the fake services can be read back.
import {
  coreServices,
  createServiceRef,
  definePlugin,
  extensionPoints,
  PluginRefusedError,
  z,
  type Embedder,
  type HttpClient,
  type PluginManifest,
} from '@agent-host/sdk';
import { embedderConformance, startTestKernel } from '@agent-host/sdk/testing';
import embedders from '@agent-host/plugin-embedders';
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

const embedder = (dim: number): Embedder => ({
  describe: () => ({ backend_type: 'fake', provider: 'fake', model: 'fake', dim }),
  embed: async (texts) => texts.map(() => Array.from({ length: dim }, () => 0.5)),
});

const registering = (id: string, key: string, extra: Partial<Parameters<typeof definePlugin>[0]> = {}) =>
  definePlugin({
    id,
    sdk: '^1.0.0',
    register(env) {
      env.registerInit({ deps: { embedders: extensionPoints.embedders }, init: ({ embedders }) => embedders.register(key, embedder(4)) });
    },
    ...extra,
  });

async function refusal(promise: Promise<unknown>): Promise<PluginRefusedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof PluginRefusedError)) throw new Error(`expected a PluginRefusedError, got ${String(error)}`);
  return error;
}

t.test('a first-party plugin, imported through its package entry, keeps its suite in the test kernel', async (t) => {
  const manifest = JSON.parse(await readFile(require.resolve('@agent-host/plugin-embedders/package.json'), 'utf8')).agentHost as PluginManifest;
  const kernel = await startTestKernel({ plugins: [embedders], manifests: [manifest] });
  t.same(kernel.keys(extensionPoints.embedders), ['feature-hashing', 'openai'], 'it registered what its manifest declares');
  for (const rule of embedderConformance(kernel.get(extensionPoints.embedders, 'feature-hashing'))) await t.test(rule.rule, () => rule.check());
  t.throws(() => kernel.get(extensionPoints.embedders, 'nope'), /nothing is registered as "nope" in embedders \(registered: feature-hashing, openai\)/);
});

t.test('the host refusals, with the plugin named', async (t) => {
  const throwing = definePlugin({
    id: 'throws',
    sdk: '^1.0.0',
    register: (env) =>
      env.registerInit({
        deps: {},
        init: () => {
          throw new Error('no licence key');
        },
      }),
  });
  let error = await refusal(startTestKernel({ plugins: [throwing] }));
  t.match(
    { plugin: error.pluginId, reason: error.reason, message: error.message },
    { plugin: 'throws', reason: 'init_failed', message: /init threw: no licence key/ },
  );

  error = await refusal(startTestKernel({ plugins: [registering('first', 'same'), registering('second', 'same')] }));
  t.match(error.message, /embedders key "same" is already registered by plugin "first"/, 'a key claimed twice');

  const needy = definePlugin({
    id: 'needy',
    sdk: '^1.0.0',
    register: (env) => env.registerInit({ deps: { x: { id: 'vendor.thing', kind: 'service' } as never }, init: () => undefined }),
  });
  error = await refusal(startTestKernel({ plugins: [needy] }));
  t.match({ reason: error.reason, message: error.message }, { reason: 'missing_dependency', message: /requires service "vendor.thing" \(deps\.x\)/ });
  await t.resolves(
    startTestKernel({ plugins: [needy], services: [[{ id: 'vendor.thing', kind: 'service' }, { hello: true }]] }),
    'a service the test provides satisfies it',
  );

  const configured = registering('configured', 'c', { config: z.object({ size: z.number().int() }) });
  error = await refusal(startTestKernel({ plugins: [configured], config: { configured: { size: 'big' } } }));
  t.match({ reason: error.reason, message: error.message }, { reason: 'invalid_config', message: /\[plugins\.configured\]\.size/ });

  error = await refusal(
    startTestKernel({ plugins: [registering('quiet', 'q')], manifests: [{ id: 'quiet', sdk: '^1.0.0', contributes: { embedders: ['q', 'r'] } }] }),
  );
  t.match(error.message, /declares embedders "r" in "contributes" but did not register them/, 'the manifest is held to what was registered');

  error = await refusal(startTestKernel({ plugins: [registering('a', 'a', { dependsOn: ['b'] }), registering('b', 'b', { dependsOn: ['a'] })] }));
  t.match(error.message, /dependency cycle among plugins a, b/);

  const twice = definePlugin({
    id: 'twice',
    sdk: '^1.0.0',
    register: (env) => {
      env.registerInit({ deps: {}, init: () => undefined });
      env.registerInit({ deps: {}, init: () => undefined });
    },
  });
  const hanging = definePlugin({
    id: 'hangs',
    sdk: '^1.0.0',
    register: (env) => env.registerInit({ deps: {}, init: () => new Promise<void>((resolve) => setTimeout(resolve, 1_000)) }),
  });
  error = await refusal(startTestKernel({ plugins: [hanging], initTimeoutMs: 100 }));
  t.equal(error.message, 'plugin "hangs" refused (init_failed): init did not finish within 0.1 s', 'an init past its deadline');

  error = await refusal(startTestKernel({ plugins: [twice] }));
  t.match(error.message, /registerInit exactly once \(called 2 times\)/);
});

t.test('the fake services keep what a plugin did', async (t) => {
  const order: string[] = [];
  const busy = definePlugin({
    id: 'busy',
    sdk: '^1.0.0',
    register(env) {
      env.registerInit({
        deps: {
          logger: coreServices.logger,
          secrets: coreServices.secrets,
          jobs: coreServices.jobs,
          audit: coreServices.audit,
          store: coreServices.objectStore,
          lifecycle: coreServices.lifecycle,
          health: coreServices.health,
          config: coreServices.config,
        },
        async init({ logger, secrets, jobs, audit, store, lifecycle, health, config }) {
          logger.child({ step: 'init' }).info({ answer: 42 }, 'ready');
          const sealed = secrets.encrypt('s3cret', 'row:1');
          if (secrets.decrypt(sealed, 'row:1') !== 's3cret') throw new Error('round trip');
          let otherContext: unknown;
          try {
            secrets.decrypt(sealed, 'row:2');
          } catch (e) {
            otherContext = e;
          }
          if (!otherContext) throw new Error('a ciphertext decrypted under another context');
          jobs.define<{ n: number }>('count', async (job) => void order.push(`job ${job.data.n}`));
          lifecycle.onStart(async () => {
            order.push('start');
            await jobs.now('count', { n: 1 });
            await jobs.schedule('in 5 minutes', 'count', { n: 2 });
          });
          lifecycle.onStop(() => void order.push('stop'));
          health.register('upstream', async () => ({ state: 'warning', message: config.section('timeouts')?.http_request_seconds === 5 ? 'slow' : 'unset' }));
          await audit.write({ action: 'busy.ready', outcome: 'success' });
          await store.put('busy/note.txt', new TextEncoder().encode('hi'), { contentType: 'text/plain' });
        },
      });
    },
  });
  const kernel = await startTestKernel({ plugins: [busy], hostConfig: { timeouts: { http_request_seconds: 5 } } });
  await kernel.settled();
  t.same(kernel.logs, [{ level: 'info', msg: 'ready', fields: { plugin: 'busy', step: 'init', answer: 42 } }]);
  t.same(kernel.audit, [{ actor_id: 'busy', action: 'busy.ready', outcome: 'success' }]);
  t.same(order, ['start', 'job 1'], 'start hooks ran after init, and a job queued now ran');
  t.same(
    kernel.jobs.map((j) => [j.name, j.state]),
    [
      ['busy.count', 'succeeded'],
      ['busy.count', 'queued'],
    ],
    'job names carry the plugin id; a scheduled run waits',
  );
  t.same(await kernel.health(), { 'busy.upstream': { state: 'warning', message: 'slow' } });
  t.equal(new TextDecoder().decode((await kernel.objectStore.get('busy/note.txt')).data), 'hi');
  await t.rejects(kernel.objectStore.get('busy/missing.txt'), { status: 404 }, 'a missing object is a NotFoundError');
  await kernel.stop();
  await kernel.stop();
  t.same(order, ['start', 'job 1', 'stop'], 'stop hooks run once');
});

t.test("the fake http's request reads a fetch response as a Node stream, as the host's does", async (t) => {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  let http!: HttpClient;
  const caller = definePlugin({
    id: 'caller',
    sdk: '^1.15.0',
    register: (env) => env.registerInit({ deps: { http: coreServices.http }, init: (deps) => void (http = deps.http) }),
  });
  const kernel = await startTestKernel({ plugins: [caller] });
  t.teardown(() => kernel.stop());
  const response = await http.request(url, { method: 'POST', body: '{}' });
  t.match(response, { status: 200, url });
  t.equal(response.headers.get('content-type'), 'application/json');
  t.same(await response.body.json(), { ok: true });
  const chunks: string[] = [];
  for await (const chunk of (await http.request(url)).body) chunks.push(Buffer.from(chunk as Uint8Array).toString());
  t.equal(chunks.join(''), '{"ok":true}', 'the body is async-iterable');
  t.equal(new TextDecoder().decode(await (await http.request(url)).body.arrayBuffer()), '{"ok":true}');
});

t.test('a plugin offers a service; the plugins that list it in deps initialise after it, whatever the order given', async (t) => {
  const greeter = createServiceRef<{ greet(name: string): string }>({ id: 'acme.greeter' });
  const provider = definePlugin({
    id: 'acme-greeter',
    sdk: '^1.8.0',
    config: z.object({ salutation: z.string().default('Hello') }),
    register(env) {
      env.registerService({
        service: greeter,
        deps: { log: coreServices.logger },
        factory: ({ log }, config) => ({ greet: (name) => (log.info('greeting'), `${config.salutation}, ${name}`) }),
      });
      env.registerInit({ deps: {}, init: () => undefined });
    },
  });
  let greeting = '';
  const consumer = definePlugin({
    id: 'acme-desk',
    sdk: '^1.8.0',
    register: (env) => env.registerInit({ deps: { greeter }, init: ({ greeter }) => void (greeting = greeter.greet('Ada')) }),
  });
  const kernel = await startTestKernel({ plugins: [consumer, provider], config: { 'acme-greeter': { salutation: 'Welcome' } } });
  t.equal(greeting, 'Welcome, Ada', 'the consumer got the service, built with its provider config and deps');
  t.match(kernel.logs, [{ msg: 'greeting', fields: { plugin: 'acme-greeter' } }]);

  const copy = definePlugin({
    id: 'copycat',
    sdk: '^1.8.0',
    register: (env) => {
      env.registerService({ service: greeter, deps: {}, factory: () => ({ greet: () => '' }) });
      env.registerInit({ deps: {}, init: () => undefined });
    },
  });
  let error = await refusal(startTestKernel({ plugins: [provider, copy] }));
  t.equal(error.message, 'plugin "copycat" refused (duplicate_key): service "acme.greeter" is already offered by plugin "acme-greeter"');

  const clock = definePlugin({
    id: 'clockmaker',
    sdk: '^1.8.0',
    register: (env) => {
      env.registerService({ service: coreServices.clock, deps: {}, factory: () => ({ now: () => new Date(0) }) });
      env.registerInit({ deps: {}, init: () => undefined });
    },
  });
  error = await refusal(startTestKernel({ plugins: [clock] }));
  t.equal(error.message, 'plugin "clockmaker" refused (duplicate_key): offers service "core.clock", which core provides');

  const a = createServiceRef<object>({ id: 'cycle.a' });
  const b = createServiceRef<object>({ id: 'cycle.b' });
  const offersA = definePlugin({
    id: 'offers-a',
    sdk: '^1.8.0',
    register: (env) => {
      env.registerService({ service: a, deps: { b }, factory: () => ({}) });
      env.registerInit({ deps: {}, init: () => undefined });
    },
  });
  const offersB = definePlugin({
    id: 'offers-b',
    sdk: '^1.8.0',
    register: (env) => {
      env.registerService({ service: b, deps: { a }, factory: () => ({}) });
      env.registerInit({ deps: {}, init: () => undefined });
    },
  });
  error = await refusal(startTestKernel({ plugins: [offersA, offersB] }));
  t.match(error.message, /dependency cycle among plugins offers-a, offers-b/);
});
