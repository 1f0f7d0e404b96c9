import { extensionPoints } from '../extensions/index.js';
import type { ExtensionRegistry } from '../extensions/registry.js';
import {
  buildServices,
  checkContributions,
  declaredParts,
  dependencyOrder,
  KeyedRegistry,
  runInit,
  runLifecycleHook,
  validatedConfig,
  withServiceProviders,
} from '../kernel/index.js';
import type { PluginManifest } from '../manifest.js';
import type { AgentHostPlugin } from '../plugin.js';
import type { ExtensionPoint, ServiceRef } from '../refs.js';
import { coreServices, type AuditEvent, type HealthCheckResult, type ModelCallUsage, type ObjectStore, type UsageScope } from '../services/index.js';
import {
  ephemeralSecrets,
  fixedConfig,
  memoryJobs,
  memoryLogger,
  memoryObjectStore,
  plainHttp,
  recordingAudit,
  recordingUsage,
  type HealthCheck,
  type JobRecord,
  type LogRecord,
} from './fake-services.js';

/** What {@link startTestKernel} boots. @beta */
export interface TestKernelOptions {
  /** The plugins under test, as their packages export them (the default export). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each plugin has its own config type
  plugins: readonly AgentHostPlugin<any>[];
  /** Each plugin's `[plugins.<id>]` section by plugin id, validated by its schema as the host does. */
  config?: Readonly<Record<string, unknown>>;
  /** The shared sections `coreServices.config` answers, for example `{ timeouts: { http_request_seconds: 5 } }`. */
  hostConfig?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** The plugins' manifests (`agentHost` of their package.json): what they register is held to `contributes`. */
  manifests?: readonly PluginManifest[];
  /** How long one plugin's `init` may take before it is refused, as `[plugins] init_timeout_seconds`; 30 s by default. */
  initTimeoutMs?: number;
  /** Replaces a fake core service or provides a service another plugin would: `[[coreServices.clock, myClock]]`. */
  services?: readonly (readonly [ServiceRef<unknown>, unknown])[];
}

/** A booted test kernel: what the plugins registered, and what they did to the fake services. @beta */
export interface TestKernel {
  /** The implementation registered under `key`; throws naming the registered keys when there is none. */
  get<T>(point: ExtensionPoint<ExtensionRegistry<T>>, key: string): T;
  /** The keys registered at an extension point, in registration order. */
  keys(point: ExtensionPoint<ExtensionRegistry<unknown>>): string[];
  /** Lines logged, with the `plugin` binding of each plugin's logger. */
  readonly logs: LogRecord[];
  /** Audit records written, with the plugin's id as `actor_id` unless the plugin set one. */
  readonly audit: AuditEvent[];
  /** Model usage recorded. */
  readonly usage: { scope: UsageScope; usage: ModelCallUsage }[];
  /** Jobs defined runs and schedules, with their state; job names carry the plugin id as the host's do. */
  readonly jobs: JobRecord[];
  /** The in-memory `coreServices.objectStore`. */
  readonly objectStore: ObjectStore;
  /** Runs every registered health check, by `<plugin id>.<name>`. */
  health(): Promise<Record<string, HealthCheckResult>>;
  /** Resolves when every job started with `jobs.now` has finished. */
  settled(): Promise<void>;
  /** Runs the plugins' stop hooks in reverse order. */
  stop(): Promise<void>;
}

/**
 * Boots the plugins in-process as the host would, without Postgres, Chroma or a job store: the same rules (SDK
 * dependency order, one init finished within its deadline, config validated by the plugin's schema, every dep provided, no key registered twice,
 * the manifest held to what was registered, start hooks run) over fake core services that keep what plugins did in
 * memory. A refusal rejects with the host's `PluginRefusedError`, naming the plugin and the reason.
 * @beta
 */
export async function startTestKernel(options: TestKernelOptions): Promise<TestKernel> {
  const logs: LogRecord[] = [];
  const audit: AuditEvent[] = [];
  const usage: { scope: UsageScope; usage: ModelCallUsage }[] = [];
  const jobs: JobRecord[] = [];
  const running = new Set<Promise<void>>();
  const checks = new Map<string, HealthCheck>();
  const stopHooks: { pluginId: string; hook: () => void | Promise<void> }[] = [];
  const objectStore = memoryObjectStore();
  const hostConfig = options.hostConfig ?? {};
  const shared = new Map<string, unknown>([
    [coreServices.config.id, fixedConfig(hostConfig)],
    [coreServices.secrets.id, ephemeralSecrets()],
    [coreServices.objectStore.id, objectStore],
    [coreServices.clock.id, { now: () => new Date() }],
    [coreServices.http.id, plainHttp(Number(hostConfig.timeouts?.http_request_seconds ?? 30) * 1000)],
    ...(options.services ?? []).map(([ref, value]) => [ref.id, value] as const),
  ]);
  const registries = new Map(Object.entries(extensionPoints).map(([name, point]) => [point.id, new KeyedRegistry<unknown>(name)]));

  const starts: { pluginId: string; hook: () => void | Promise<void> }[] = [];
  const declared = options.plugins.map((plugin) => ({ id: plugin.id, dependsOn: plugin.dependsOn, plugin, parts: declaredParts(plugin) }));
  for (const { plugin, parts } of dependencyOrder(withServiceProviders(declared))) {
    const config = validatedConfig(plugin, options.config?.[plugin.id]);
    const registered: Record<string, string[]> = {};
    const scoped = new Map<string, unknown>([
      [coreServices.logger.id, memoryLogger(logs, { plugin: plugin.id })],
      [coreServices.audit.id, recordingAudit(audit, plugin.id)],
      [coreServices.usage.id, recordingUsage(usage)],
      [coreServices.jobs.id, memoryJobs(jobs, running, plugin.id)],
      [
        coreServices.lifecycle.id,
        {
          onStart: (hook: () => void) => void starts.push({ pluginId: plugin.id, hook }),
          onStop: (hook: () => void) => void stopHooks.push({ pluginId: plugin.id, hook }),
        },
      ],
      [coreServices.health.id, { register: (name: string, check: HealthCheck) => void checks.set(`${plugin.id}.${name}`, check) }],
      ...[...registries].map(
        ([id, registry]) => [id, registry.forPlugin(plugin.id, { onRegister: (key) => void (registered[registry.name] ??= []).push(key) })] as const,
      ),
    ]);
    const resolve = (refId: string) => (shared.has(refId) ? shared.get(refId) : scoped.get(refId));
    for (const [refId, service] of await buildServices(plugin, parts, config, resolve)) shared.set(refId, service);
    await runInit(plugin, parts.init, config, resolve, options.initTimeoutMs ?? 30_000);
    const manifest = options.manifests?.find((m) => m.id === plugin.id);
    if (manifest) checkContributions(plugin.id, manifest.contributes ?? {}, registered);
  }
  for (const { pluginId, hook } of starts) await runLifecycleHook(pluginId, 'start', hook);

  const registryOf = (point: ExtensionPoint<unknown>) => {
    const registry = registries.get(point.id);
    if (!registry) throw new Error(`unknown extension point ${point.id}`);
    return registry;
  };
  return {
    get<T>(point: ExtensionPoint<ExtensionRegistry<T>>, key: string): T {
      const registry = registryOf(point);
      if (!registry.has(key))
        throw new Error(
          `nothing is registered as "${key}" in ${registry.name} (registered: ${
            registry
              .list()
              .map((e) => e.key)
              .join(', ') || 'none'
          })`,
        );
      return registry.get(key) as T;
    },
    keys: (point) =>
      registryOf(point)
        .list()
        .map((entry) => entry.key),
    logs,
    audit,
    usage,
    jobs,
    objectStore,
    async health() {
      const results: Record<string, HealthCheckResult> = {};
      for (const [name, check] of checks) results[name] = await check().catch((error: unknown) => ({ state: 'failed' as const, message: String(error) }));
      return results;
    },
    async settled() {
      while (running.size) await Promise.all([...running]);
    },
    async stop() {
      for (const { hook } of stopHooks.splice(0).reverse()) await hook();
    },
  };
}
