import {
  coreServices,
  extensionPoints,
  PluginRefusedError,
  SDK_VERSION,
  type AgentHostPlugin,
  type ExtensionPoint,
  type ExtensionRegistry,
  type LifecycleService,
  type Logger,
} from '@agent-host/sdk';
import semver from 'semver';
import type { DependencyContainer } from 'tsyringe';
import {
  checkContributions,
  CONFIG_DEPENDENT_KEYS,
  buildServices,
  declaredParts,
  type PluginParts,
  withServiceProviders,
  dependencyOrder,
  KeyedRegistry,
  runInit,
  runLifecycleHook,
  validatedConfig,
} from '@agent-host/sdk/kernel';
import { importPlugin, readCandidate, type PluginCandidate, type PluginOrigin } from './plugin-source.js';

/** What `agent-host plugins list` and the health report show of a plugin. */
export interface PluginInfo {
  id: string;
  packageName: string;
  version: string;
  origin: PluginOrigin;
  location: string;
  sdk: string;
  description: string;
  /** Keys registered, by extension point name. */
  registered: Record<string, string[]>;
  /** Keys it registered as replaceable defaults that another plugin replaces (extension point name, key, that plugin). */
  replaced: Record<string, Record<string, string>>;
}

/** Builds a plugin-scoped service (logger, jobs, health...) for one plugin. */
export type ScopedServiceFactory = (pluginId: string) => unknown;

export interface KernelOptions {
  /** Root container holding the core services under their ref ids. */
  container: DependencyContainer;
  logger: Logger;
  /** Plugin ids, package names or paths to load, in order. */
  specifiers: readonly string[];
  /** Plugin ids not to load. */
  disabled: readonly string[];
  /** Directory holding first-party plugins (`plugins/<id>`). */
  pluginsDir: string;
  /** Directory that relative plugin paths and package names resolve from. */
  baseDir: string;
  /** The raw `[plugins.<id>]` section of a plugin. */
  pluginConfig(id: string): unknown;
  /** Plugin-scoped services by ref id. */
  scopedServices: Record<string, ScopedServiceFactory>;
  /** How long one plugin's `init` may take before it is refused (`[plugins] init_timeout_seconds`); 30 s by default. */
  initTimeoutMs?: number;
  /** Plugin ids whose refusal at init leaves them out instead of refusing start-up (`[plugins] optional`). */
  optional?: readonly string[];
}

type Hook = () => void | Promise<void>;

interface LoadedPlugin {
  candidate: PluginCandidate;
  plugin: AgentHostPlugin;
  parts: PluginParts;
  info: PluginInfo;
  startHooks: Hook[];
  stopHooks: Hook[];
}

/**
 * The plugin kernel: reads manifests, checks them, imports plugins, resolves
 * their typed deps through the tsyringe container and runs their lifecycle.
 * Every refusal is a {@link PluginRefusedError} naming the plugin.
 */
export class Kernel {
  private readonly registries = new Map<string, KeyedRegistry<unknown>>();
  private loaded: LoadedPlugin[] = [];
  private readonly leftOut: PluginRefusedError[] = [];
  private started: LoadedPlugin[] = [];

  constructor(private readonly options: KernelOptions) {
    for (const [name, point] of Object.entries(extensionPoints)) {
      this.registries.set(point.id, new KeyedRegistry(name));
    }
  }

  /** The registry behind an extension point. */
  registry<T>(point: ExtensionPoint<ExtensionRegistry<T>>): KeyedRegistry<T> {
    const registry = this.registries.get(point.id);
    if (!registry) throw new Error(`unknown extension point ${point.id}`);
    return registry as KeyedRegistry<T>;
  }

  plugins(): PluginInfo[] {
    return this.loaded.map((p) => p.info);
  }

  /** Loads, checks and initialises every enabled plugin, in dependency order. */
  async init(): Promise<void> {
    const candidates = this.readCandidates();
    const optional = new Set(this.options.optional ?? []);
    const imported: LoadedPlugin[] = [];
    for (const candidate of candidates) {
      const plugin = await importPlugin(candidate);
      try {
        imported.push({ candidate, plugin, parts: declaredParts(plugin), startHooks: [], stopHooks: [], info: infoOf(candidate, plugin, {}) });
      } catch (error) {
        this.leaveOut(plugin.id, error, optional);
      }
    }
    const declaredOut = new Set(this.leftOut.map((refused) => refused.pluginId));
    const ordered = dependencyOrder(
      withServiceProviders(imported.map((p) => ({ ...p, id: p.plugin.id, dependsOn: p.plugin.dependsOn }))).map((p) => ({
        ...p,
        needs: p.dependsOn,
        dependsOn: p.dependsOn.filter((id) => !declaredOut.has(id)),
      })),
    );
    for (const entry of ordered) {
      try {
        const missing = entry.needs.find((id) => this.leftOut.some((refused) => refused.pluginId === id));
        if (missing) throw new PluginRefusedError(entry.plugin.id, 'missing_dependency', `depends on plugin "${missing}", which was left out`);
        await this.initPlugin(entry);
        this.loaded.push(entry);
      } catch (error) {
        this.leaveOut(entry.plugin.id, error, optional);
      }
    }
  }

  /** Rethrows the refusal of a required plugin; an optional one is left out, with what it registered. */
  private leaveOut(pluginId: string, error: unknown, optional: ReadonlySet<string>): void {
    if (!(error instanceof PluginRefusedError) || !optional.has(pluginId)) throw error;
    for (const registry of this.registries.values()) registry.revoke(pluginId);
    this.leftOut.push(error);
    this.options.logger.warn({ plugin: pluginId, reason: error.reason }, `${error.message}; it is optional, so the host starts without it`);
  }

  /** The optional plugins refused at init, each with the one-line reason; the host runs without them. */
  refused(): readonly PluginRefusedError[] {
    return this.leftOut;
  }

  /** Whether an enabled plugin's manifest contributes `key` to the extension point named `point`; runs no plugin code. */
  declares(point: string, key: string): boolean {
    return this.readCandidates().some((candidate) => candidate.manifest.contributes?.[point]?.includes(key));
  }

  /**
   * What {@link init} would load, without running any plugin's `init` (`agent-host plugins list`): manifests read
   * and checked, modules imported, config sections validated. `registered` is what each manifest contributes, which
   * `init` is held to.
   */
  async inspect(): Promise<PluginInfo[]> {
    const inspected: { id: string; dependsOn: readonly string[]; parts: PluginParts; info: PluginInfo }[] = [];
    for (const candidate of this.readCandidates()) {
      const plugin = await importPlugin(candidate);
      this.pluginConfig(plugin);
      // `register` only declares (no init runs): it says which services the plugin offers and needs, for the order.
      const parts = declaredParts(plugin);
      const declared = Object.entries(candidate.manifest.contributes ?? {}).map(([point, keys]) => [
        point,
        (keys ?? []).filter((key) => key !== CONFIG_DEPENDENT_KEYS),
      ]);
      inspected.push({ id: plugin.id, dependsOn: plugin.dependsOn, parts, info: infoOf(candidate, plugin, Object.fromEntries(declared)) });
    }
    return dependencyOrder(withServiceProviders(inspected)).map((entry) => entry.info);
  }

  /** Runs start hooks in dependency order. */
  async start(): Promise<void> {
    for (const entry of this.loaded) {
      for (const hook of entry.startHooks) {
        await runLifecycleHook(entry.plugin.id, 'start', hook);
      }
      this.started.push(entry);
    }
  }

  /** Runs stop hooks in reverse dependency order; a failing hook is logged, not fatal. */
  async stop(): Promise<void> {
    for (const entry of [...this.started].reverse()) {
      for (const hook of [...entry.stopHooks].reverse()) {
        try {
          await hook();
        } catch (error) {
          this.options.logger.error({ err: error, plugin: entry.plugin.id }, 'plugin stop hook failed');
        }
      }
    }
    this.started = [];
  }

  private readCandidates(): PluginCandidate[] {
    const disabled = new Set(this.options.disabled);
    const seen = new Map<string, string>();
    const candidates: PluginCandidate[] = [];
    for (const specifier of this.options.specifiers) {
      if (disabled.has(specifier)) continue;
      const candidate = readCandidate(specifier, this.options.pluginsDir, this.options.baseDir);
      if (disabled.has(candidate.id)) continue;
      const previous = seen.get(candidate.id);
      if (previous) {
        throw new PluginRefusedError(candidate.id, 'duplicate_key', `plugin id is claimed by both "${previous}" and "${specifier}"`);
      }
      seen.set(candidate.id, specifier);
      if (!semver.validRange(candidate.manifest.sdk)) {
        throw new PluginRefusedError(candidate.id, 'sdk_range_mismatch', `SDK range "${candidate.manifest.sdk}" is not a valid semver range`);
      }
      if (!semver.satisfies(SDK_VERSION, candidate.manifest.sdk)) {
        throw new PluginRefusedError(
          candidate.id,
          'sdk_range_mismatch',
          `requires @agent-host/sdk ${candidate.manifest.sdk}, but this host provides ${SDK_VERSION}`,
        );
      }
      candidates.push(candidate);
    }
    return candidates;
  }

  /** The plugin's config section, validated by its schema. */
  private pluginConfig(plugin: AgentHostPlugin): unknown {
    return validatedConfig(plugin, this.options.pluginConfig(plugin.id));
  }

  private async initPlugin(entry: LoadedPlugin): Promise<void> {
    const { plugin } = entry;
    const config = this.pluginConfig(plugin);
    const scope = this.scopeFor(entry);
    const resolve = (refId: string) => (scope.isRegistered(refId, true) ? scope.resolve(refId) : undefined);
    // Services a plugin offers live in the root container, where the plugins after it resolve them.
    for (const [refId, service] of await buildServices(plugin, entry.parts, config, resolve)) this.options.container.register(refId, { useValue: service });
    await runInit(plugin, entry.parts.init, config, resolve, this.options.initTimeoutMs ?? 30_000);
    checkContributions(plugin.id, entry.candidate.manifest.contributes ?? {}, entry.info.registered);
    // The banner and `plugins list` name what loaded; one line per plugin is for debugging.
    this.options.logger.debug({ plugin: plugin.id, version: entry.info.version, registered: entry.info.registered }, 'plugin initialised');
  }

  /** A child container holding the plugin-scoped services and registrars. */
  private scopeFor(entry: LoadedPlugin): DependencyContainer {
    const id = entry.plugin.id;
    const scope = this.options.container.createChildContainer();
    for (const [refId, factory] of Object.entries(this.options.scopedServices)) {
      scope.register(refId, { useValue: factory(id) });
    }
    const lifecycle: LifecycleService = {
      onStart: (hook) => void entry.startHooks.push(hook),
      onStop: (hook) => void entry.stopHooks.push(hook),
    };
    scope.register(coreServices.lifecycle.id, { useValue: lifecycle });
    for (const [pointId, registry] of this.registries) {
      const view = registry.forPlugin(id, {
        onRegister: (key) => void (entry.info.registered[registry.name] ??= []).push(key),
        onReplaced: (key, by) => {
          (entry.info.replaced[registry.name] ??= {})[key] = by;
          this.options.logger.info({ plugin: id, [registry.name]: key, by }, 'a default registration is replaced by another plugin');
        },
      });
      scope.register(pointId, { useValue: view });
    }
    return scope;
  }
}

function infoOf(candidate: PluginCandidate, plugin: AgentHostPlugin, registered: Record<string, string[]>): PluginInfo {
  return {
    id: plugin.id,
    packageName: candidate.packageName,
    version: candidate.version,
    origin: candidate.origin,
    location: candidate.directory,
    sdk: plugin.sdk,
    description: candidate.manifest.description ?? '',
    registered,
    replaced: {},
  };
}
