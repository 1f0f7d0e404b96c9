import {
  coreServices,
  extensionPoints,
  PluginRefusedError,
  SDK_VERSION,
  type AgentHostPlugin,
  type DependencyRef,
  type ExtensionPoint,
  type ExtensionRegistry,
  type LifecycleService,
  type Logger,
  type PluginInit,
} from '@agent-host/sdk';
import semver from 'semver';
import type { DependencyContainer } from 'tsyringe';
import { dependencyOrder } from './order.js';
import { importPlugin, readCandidate, type PluginCandidate, type PluginOrigin } from './plugin-source.js';
import { KeyedRegistry } from './registry.js';

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
}

type Hook = () => void | Promise<void>;

interface LoadedPlugin {
  candidate: PluginCandidate;
  plugin: AgentHostPlugin;
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
    const imported: LoadedPlugin[] = [];
    for (const candidate of candidates) {
      const plugin = await importPlugin(candidate);
      imported.push({ candidate, plugin, startHooks: [], stopHooks: [], info: infoOf(candidate, plugin, {}) });
    }
    const ordered = dependencyOrder(imported.map((p) => ({ ...p, id: p.plugin.id, dependsOn: p.plugin.dependsOn })));
    for (const entry of ordered) {
      await this.initPlugin(entry);
      this.loaded.push(entry);
    }
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
    const inspected: { id: string; dependsOn: readonly string[]; info: PluginInfo }[] = [];
    for (const candidate of this.readCandidates()) {
      const plugin = await importPlugin(candidate);
      this.pluginConfig(plugin);
      const declared = Object.entries(candidate.manifest.contributes ?? {}).map(([point, keys]) => [point, (keys ?? []).filter((key) => key !== CONFIG_DEPENDENT_KEYS)]);
      inspected.push({ id: plugin.id, dependsOn: plugin.dependsOn, info: infoOf(candidate, plugin, Object.fromEntries(declared)) });
    }
    return dependencyOrder(inspected).map((entry) => entry.info);
  }

  /** Runs start hooks in dependency order. */
  async start(): Promise<void> {
    for (const entry of this.loaded) {
      for (const hook of entry.startHooks) {
        await runHook(entry.plugin.id, 'start', hook);
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
    const parsed = plugin.config.safeParse(this.options.pluginConfig(plugin.id) ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `[plugins.${plugin.id}]${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message}`);
      throw new PluginRefusedError(plugin.id, 'invalid_config', issues.join('; '));
    }
    return parsed.data;
  }

  private async initPlugin(entry: LoadedPlugin): Promise<void> {
    const { plugin } = entry;
    const config = this.pluginConfig(plugin);

    const inits: PluginInit<Record<string, DependencyRef>, unknown>[] = [];
    try {
      plugin.register({ registerInit: (init) => void inits.push(init as unknown as PluginInit<Record<string, DependencyRef>, unknown>) });
    } catch (error) {
      throw new PluginRefusedError(plugin.id, 'init_failed', `register() threw: ${(error as Error).message}`, { cause: error });
    }
    if (inits.length !== 1) {
      throw new PluginRefusedError(plugin.id, 'invalid_plugin', `register() must call registerInit exactly once (called ${inits.length} times)`);
    }
    const init = inits[0]!;
    const scope = this.scopeFor(entry);
    const deps: Record<string, unknown> = {};
    for (const [name, ref] of Object.entries(init.deps)) {
      if (!ref || typeof ref.id !== 'string' || !scope.isRegistered(ref.id, true)) {
        throw new PluginRefusedError(
          plugin.id,
          'missing_dependency',
          `requires ${ref?.kind ?? 'service'} "${ref?.id ?? String(ref)}" (deps.${name}), which neither core nor any loaded plugin provides`,
        );
      }
      deps[name] = scope.resolve(ref.id);
    }
    try {
      await init.init(deps as never, config);
    } catch (error) {
      if (error instanceof PluginRefusedError) throw error;
      throw new PluginRefusedError(plugin.id, 'init_failed', `init threw: ${(error as Error).message}`, { cause: error });
    }
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
      const view = registry.forPlugin(id, (key) => {
        (entry.info.registered[registry.name] ??= []).push(key);
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
  };
}

async function runHook(pluginId: string, phase: string, hook: Hook): Promise<void> {
  try {
    await hook();
  } catch (error) {
    throw new PluginRefusedError(pluginId, 'init_failed', `${phase} hook threw: ${(error as Error).message}`, { cause: error });
  }
}

/** Marks a manifest list whose keys depend on the plugin's config (for example content types routed by config). */
const CONFIG_DEPENDENT_KEYS = '*';

/**
 * The manifest is checked against what `init` registered, so that `plugins list` and anything else reading
 * manifests before running code can trust them: registering into an undeclared extension point or under an
 * undeclared key, or declaring a key that was not registered, refuses the plugin.
 */
function checkContributions(pluginId: string, declared: Partial<Record<string, string[]>>, registered: Record<string, string[]>): void {
  const problems: string[] = [];
  for (const point of new Set([...Object.keys(declared), ...Object.keys(registered)])) {
    const keys = declared[point] ?? [];
    const made = new Set(registered[point] ?? []);
    const undeclared = [...made].filter((key) => !keys.includes(key) && !keys.includes(CONFIG_DEPENDENT_KEYS));
    const missing = keys.filter((key) => key !== CONFIG_DEPENDENT_KEYS && !made.has(key));
    if (undeclared.length) problems.push(`registered ${point} ${undeclared.map((k) => `"${k}"`).join(', ')} that its manifest does not declare under "contributes"`);
    if (missing.length) problems.push(`declares ${point} ${missing.map((k) => `"${k}"`).join(', ')} in "contributes" but did not register them`);
  }
  if (problems.length) throw new PluginRefusedError(pluginId, 'invalid_plugin', problems.join('; '));
}
