import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRootLogger, Kernel } from '@agent-host/core';
import { extensionPoints, PluginRefusedError, SDK_VERSION } from '@agent-host/sdk';
import { KeyedRegistry } from '@agent-host/sdk/kernel';
import t from 'tap';
import { container } from 'tsyringe';
import { createSecrets } from '../../core/src/services/secrets.js';
import { recordingHttp } from '../helpers/http-client.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/plugins/kernel');
const logger = createRootLogger('silent');

function kernel(specifiers: string[], options: { config?: Record<string, unknown>; disabled?: string[]; optional?: string[]; initTimeoutMs?: number } = {}) {
  return new Kernel({
    optional: options.optional,
    initTimeoutMs: options.initTimeoutMs,
    container: container.createChildContainer(),
    logger,
    specifiers,
    disabled: options.disabled ?? [],
    pluginsDir: path.resolve(fixtures, '../../../../plugins'),
    baseDir: fixtures,
    pluginConfig: (id) => options.config?.[id],
    scopedServices: { 'core.logger': () => logger },
  });
}

async function refusal(t: { type: (v: unknown, c: unknown, m?: string) => unknown }, k: Kernel): Promise<PluginRefusedError> {
  const error = await k.init().then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(error, PluginRefusedError, 'start-up is refused with a PluginRefusedError');
  return error as PluginRefusedError;
}

t.test('an SDK range the host does not satisfy refuses start-up, naming the plugin and the range', async (t) => {
  const error = await refusal(t, kernel(['./sdk-too-new']));
  t.equal(error.pluginId, 'sdk-too-new');
  t.equal(error.reason, 'sdk_range_mismatch');
  t.equal(error.message, `plugin "sdk-too-new" refused (sdk_range_mismatch): requires @agent-host/sdk ^2.0.0, but this host provides ${SDK_VERSION}`);
});

t.test('config failing the plugin schema refuses start-up, naming the plugin and the key', async (t) => {
  const error = await refusal(t, kernel(['./strict-config'], { config: { 'strict-config': { endpoint: 'not a url' } } }));
  t.equal(error.reason, 'invalid_config');
  t.match(error.message, /plugin "strict-config" refused \(invalid_config\): \[plugins\.strict-config\]\.endpoint/);
  const unknownKey = await refusal(t, kernel(['./strict-config'], { config: { 'strict-config': { endpoint: 'http://x', typo: 1 } } }));
  t.match(unknownKey.message, /strict-config.*invalid_config.*typo/, 'unknown keys are refused too');
});

t.test('two plugins claiming one key refuses start-up, naming both plugins and the key', async (t) => {
  const error = await refusal(t, kernel(['./claims-key-a', './claims-key-b']));
  t.equal(error.pluginId, 'claims-key-b');
  t.equal(error.reason, 'duplicate_key');
  t.match(error.message, /plugin "claims-key-b" refused \(duplicate_key\): orchestrators key "shared_key_v1" is already registered by plugin "claims-key-a"/);
});

t.test('the same plugin id from two places refuses start-up', async (t) => {
  const error = await refusal(t, kernel(['./claims-key-a', path.join(fixtures, 'claims-key-a')]));
  t.equal(error.reason, 'duplicate_key');
  t.match(error.message, /plugin "claims-key-a".*claimed by both/);
});

t.test('a missing plugin dependency refuses start-up, naming the plugin and what is missing', async (t) => {
  const error = await refusal(t, kernel(['./needs-plugin']));
  t.equal(error.reason, 'missing_dependency');
  t.match(error.message, /plugin "needs-plugin" refused \(missing_dependency\): depends on plugin "not-installed"/);
});

t.test('a dependency that is disabled counts as missing', async (t) => {
  const error = await refusal(t, kernel(['./lifecycle-base', './lifecycle-top'], { disabled: ['lifecycle-base'] }));
  t.equal(error.pluginId, 'lifecycle-top');
  t.equal(error.reason, 'missing_dependency');
});

t.test('a service ref nobody provides refuses start-up, naming the plugin and the ref', async (t) => {
  const error = await refusal(t, kernel(['./needs-service']));
  t.equal(error.reason, 'missing_dependency');
  t.match(error.message, /plugin "needs-service" refused \(missing_dependency\): requires service "acme\.billing" \(deps\.billing\)/);
});

t.test('an init that throws refuses start-up, naming the plugin and the cause', async (t) => {
  const error = await refusal(t, kernel(['./init-throws']));
  t.equal(error.reason, 'init_failed');
  t.match(error.message, /plugin "init-throws" refused \(init_failed\): init threw: cannot reach the license server/);
});

t.test('an init that outlasts [plugins] init_timeout_seconds refuses start-up, naming the plugin and the deadline', async (t) => {
  const started = Date.now();
  const error = await refusal(t, kernel(['./hangs-in-init'], { initTimeoutMs: 200 }));
  t.equal(error.reason, 'init_failed');
  t.equal(error.message, 'plugin "hangs-in-init" refused (init_failed): init did not finish within 0.2 s');
  t.ok(Date.now() - started < 450, 'refused at the deadline, not when the init ends');
});

t.test('an optional plugin refused at init is left out, with what it registered; the others load, its dependents are refused', async (t) => {
  const k = kernel(['./claims-key-a', './registers-then-throws', './hangs-in-init', './needs-partial'], {
    optional: ['registers-then-throws', 'hangs-in-init', 'needs-partial'],
    initTimeoutMs: 200,
  });
  await k.init();
  t.same(
    k.plugins().map((p) => p.id),
    ['claims-key-a'],
    'the plugin that initialised is loaded',
  );
  t.same(
    k.refused().map((r) => r.message),
    [
      'plugin "registers-then-throws" refused (init_failed): init threw: the vendor service refused the licence',
      'plugin "hangs-in-init" refused (init_failed): init did not finish within 0.2 s',
      'plugin "needs-partial" refused (missing_dependency): depends on plugin "registers-then-throws", which was left out',
    ],
    'each left-out plugin has one line naming it and the reason',
  );
  const orchestrators = k.registry(extensionPoints.orchestrators);
  t.same(
    orchestrators.list().map((e) => e.key),
    ['shared_key_v1'],
    'what the failed plugin registered before it threw is dropped',
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.notOk(orchestrators.has('late_v1'), 'an init that finishes after its deadline registers nothing');
});

t.test('an optional plugin whose register throws is left out before ordering; a plugin depending on it is refused, left out when optional', async (t) => {
  const k = kernel(['./needs-register-throws', './register-throws', './claims-key-a'], { optional: ['register-throws', 'needs-register-throws'] });
  await k.init();
  t.same(
    k.plugins().map((p) => p.id),
    ['claims-key-a'],
  );
  t.same(
    k.refused().map((r) => r.message),
    [
      'plugin "register-throws" refused (init_failed): register() threw: a declaration it could not make',
      'plugin "needs-register-throws" refused (missing_dependency): depends on plugin "register-throws", which was left out',
    ],
  );
  const required = await refusal(t, kernel(['./needs-register-throws', './register-throws'], { optional: ['register-throws'] }));
  t.equal(required.message, 'plugin "needs-register-throws" refused (missing_dependency): depends on plugin "register-throws", which was left out');
});

t.test('plugins list orders a plugin after the one whose service it needs, without running any init', async (t) => {
  const infos = await kernel(['./uses-service', './offers-service']).inspect();
  t.same(
    infos.map((p) => p.id),
    ['offers-service', 'uses-service'],
  );
});

t.test('a required plugin refused at init still refuses start-up when others are optional', async (t) => {
  const error = await refusal(t, kernel(['./claims-key-a', './init-throws'], { optional: ['claims-key-a'] }));
  t.equal(error.pluginId, 'init-throws');
});

t.test('a service one plugin offers reaches the plugin that needs it, which initialises after it whatever the configured order', async (t) => {
  const k = kernel(['./uses-service', './offers-service']);
  await k.init();
  t.same(
    k.plugins().map((p) => p.id),
    ['offers-service', 'uses-service'],
    'the provider initialises first',
  );
  const run = k
    .registry(extensionPoints.orchestrators)
    .get('priced_v1')!
    .run({} as never);
  t.same(await run.next(), { done: false, value: { type: 'token', content: '1 USD is 0.92 EUR' } }, 'the consumer used the service');
});

t.test('a service nobody offers refuses the plugin that needs it, naming the ref', async (t) => {
  const error = await refusal(t, kernel(['./uses-service']));
  t.equal(error.reason, 'missing_dependency');
  t.match(error.message, /plugin "uses-service" refused \(missing_dependency\): requires service "offers-service\.rates" \(deps\.rates\)/);
});

t.test('an unknown plugin specifier refuses start-up', async (t) => {
  const error = await refusal(t, kernel(['no-such-plugin-anywhere']));
  t.equal(error.reason, 'invalid_plugin');
  t.match(error.message, /no-such-plugin-anywhere/);
});

t.test('lifecycle hooks run in dependency order on start and in reverse on stop', async (t) => {
  const events: string[] = ((globalThis as { __lifecycleEvents?: string[] }).__lifecycleEvents ??= []);
  events.length = 0;
  // Configured in the "wrong" order on purpose: the dependency decides.
  const k = kernel(['./lifecycle-top', './lifecycle-base']);
  await k.init();
  await k.start();
  await k.stop();
  t.same(events, ['init:lifecycle-base', 'init:lifecycle-top', 'start:lifecycle-base', 'start:lifecycle-top', 'stop:lifecycle-top', 'stop:lifecycle-base']);
});

t.test('disabled plugins are not loaded and loaded plugins report what they registered', async (t) => {
  const k = kernel(['./claims-key-a', './claims-key-b'], { disabled: ['claims-key-b'] });
  await k.init();
  t.same(
    k.plugins().map((p) => p.id),
    ['claims-key-a'],
  );
  t.same(k.plugins()[0]!.registered, { orchestrators: ['shared_key_v1'] });
  t.equal(k.plugins()[0]!.version, '1.2.3');
  t.equal(k.plugins()[0]!.origin, 'path');
  t.equal(k.registry(extensionPoints.orchestrators).ownerOf('shared_key_v1'), 'claims-key-a');
});

t.test("the manifest's contributes must match what init registers", async (t) => {
  const undeclared = await refusal(t, kernel(['./registers-undeclared']));
  t.equal(undeclared.reason, 'invalid_plugin');
  t.match(
    undeclared.message,
    /plugin "registers-undeclared" refused \(invalid_plugin\): registered orchestrators "sneaky_v1" that its manifest does not declare/,
    'an undeclared key is refused',
  );
  t.match(undeclared.message, /registered retrievers "hidden"/, 'an undeclared extension point is refused');
  const unregistered = await refusal(t, kernel(['./declares-unregistered']));
  t.match(
    unregistered.message,
    /plugin "declares-unregistered" refused \(invalid_plugin\): declares orchestrators "promised_v1" in "contributes" but did not register them/,
  );
});

t.test('inspect checks manifests, SDK ranges and config sections without running any init', async (t) => {
  const infos = await kernel(['./claims-key-a', './init-throws']).inspect();
  t.same(
    infos.map((i) => [i.id, i.registered]),
    [
      ['claims-key-a', { orchestrators: ['shared_key_v1'] }],
      ['init-throws', {}],
    ],
    "an init that would throw is not run; registrations are the manifest's",
  );
  const tooNew = await kernel(['./sdk-too-new'])
    .inspect()
    .then(
      () => undefined,
      (e: unknown) => e as PluginRefusedError,
    );
  t.equal(tooNew?.reason, 'sdk_range_mismatch', 'an SDK range the host does not satisfy is still refused');
  const badConfig = await kernel(['./strict-config'], { config: { 'strict-config': { endpoint: 'not a url' } } })
    .inspect()
    .then(
      () => undefined,
      (e: unknown) => e as PluginRefusedError,
    );
  t.equal(badConfig?.reason, 'invalid_config', 'a config section failing its schema is still refused');
});

/** A kernel over the first-party model plugins, with the core services they need. */
function modelsKernel(specifiers: string[], disabled: string[] = []) {
  const scope = container.createChildContainer();
  scope.register('core.http', { useValue: recordingHttp() });
  scope.register('core.secrets', { useValue: createSecrets(randomBytes(32)) });
  return new Kernel({
    container: scope,
    logger,
    specifiers,
    disabled,
    pluginsDir: path.resolve(fixtures, '../../../../plugins'),
    baseDir: fixtures,
    pluginConfig: () => undefined,
    scopedServices: { 'core.logger': () => logger },
  });
}

t.test('a replaceable default serves its key only while no other plugin registers it, whichever loads first', async (t) => {
  for (const order of [
    ['models-langchain', 'models-openai'],
    ['models-openai', 'models-langchain'],
  ]) {
    const k = modelsKernel(order);
    await k.init();
    const providers = k.registry(extensionPoints.modelProviders);
    t.equal(providers.ownerOf('openai'), 'models-openai', `${order.join(' then ')}: models-openai serves openai`);
    t.equal(providers.get('openai')!.displayName, 'OpenAI-compatible (openai SDK)');
    t.equal(providers.ownerOf('anthropic'), 'models-langchain', 'the default plugin keeps its other keys');
    const langchain = k.plugins().find((p) => p.id === 'models-langchain')!;
    t.same(langchain.replaced, { modelProviders: { openai: 'models-openai' } }, 'the plugin list shows the replaced default and by whom');
    t.ok(langchain.registered.modelProviders!.includes('openai'), 'what it registered still matches its manifest');
    await k.stop();
  }
  const alone = modelsKernel(['models-langchain', 'models-openai'], ['models-openai']);
  await alone.init();
  t.equal(
    alone.registry(extensionPoints.modelProviders).get('openai')!.displayName,
    'OpenAI-compatible (LangChain)',
    'with models-openai disabled, the default serves',
  );
  t.same(alone.plugins()[0]!.replaced, {});
});

t.test('two defaults of one key refuse start-up; a refused plugin leaves the key to the default it replaced', async (t) => {
  const registry = new KeyedRegistry<string>('modelProviders');
  const replaced: string[] = [];
  registry
    .forPlugin('a', { onRegister: () => undefined, onReplaced: (key, by) => void replaced.push(`${key} by ${by}`) })
    .register('openai', 'a', { replaceable: true });
  t.throws(
    () => registry.forPlugin('b', { onRegister: () => undefined }).register('openai', 'b', { replaceable: true }),
    /modelProviders key "openai" is a replaceable default by plugin "a"/,
  );
  registry.forPlugin('c', { onRegister: () => undefined }).register('openai', 'c');
  t.same([registry.get('openai'), registry.ownerOf('openai'), replaced], ['c', 'c', ['openai by c']]);
  t.throws(
    () => registry.forPlugin('d', { onRegister: () => undefined }).register('openai', 'd'),
    /already registered by plugin "c"/,
    'two own registrations still clash',
  );
  registry.revoke('c');
  t.same([registry.get('openai'), registry.list().map((e) => e.owner)], ['a', ['a']], 'the default serves again');
});
