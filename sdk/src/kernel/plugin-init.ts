import { PluginRefusedError } from '../errors.js';
import { extensionPoints } from '../extensions/index.js';
import { coreServices } from '../services/index.js';
import type { AgentHostPlugin, PluginInit, PluginServiceFactory } from '../plugin.js';
import type { DependencyRef } from '../refs.js';

type AnyDeps = Record<string, DependencyRef>;

/** What a plugin's `register` declares: its one init and the services it offers other plugins. */
export interface PluginParts {
  init: PluginInit<AnyDeps, unknown>;
  services: PluginServiceFactory<unknown, AnyDeps, unknown>[];
}

/** Runs `register`; refuses a plugin that declares no init or several, offers one service twice, or throws. */
export function declaredParts(plugin: AgentHostPlugin): PluginParts {
  const inits: PluginInit<AnyDeps, unknown>[] = [];
  const services: PluginServiceFactory<unknown, AnyDeps, unknown>[] = [];
  try {
    plugin.register({
      registerInit: (init) => void inits.push(init as unknown as PluginInit<AnyDeps, unknown>),
      registerService: (service) => void services.push(service as unknown as PluginServiceFactory<unknown, AnyDeps, unknown>),
    });
  } catch (error) {
    throw new PluginRefusedError(plugin.id, 'init_failed', `register() threw: ${(error as Error).message}`, { cause: error });
  }
  if (inits.length !== 1) {
    throw new PluginRefusedError(plugin.id, 'invalid_plugin', `register() must call registerInit exactly once (called ${inits.length} times)`);
  }
  const offered = services.map((s) => s.service?.id);
  const twice = offered.find((id, i) => offered.indexOf(id) !== i);
  if (twice !== undefined) throw new PluginRefusedError(plugin.id, 'duplicate_key', `offers service "${twice}" twice`);
  return { init: inits[0]!, services };
}

/** What core provides: a plugin may not offer a service under one of these refs. */
const CORE_REF_IDS: ReadonlySet<string> = new Set([...Object.values(coreServices), ...Object.values(extensionPoints)].map((ref) => ref.id));

/**
 * Adds to each plugin's `dependsOn` the plugins whose services it (or a service it offers) needs, so dependency order
 * puts providers first and reports a cycle. Refuses a service offered by two plugins or by a plugin and core.
 */
export function withServiceProviders<P extends { id: string; dependsOn: readonly string[]; parts: PluginParts }>(plugins: P[]): P[] {
  const providers = new Map<string, string>();
  for (const plugin of plugins) {
    for (const { service } of plugin.parts.services) {
      if (CORE_REF_IDS.has(service.id)) throw new PluginRefusedError(plugin.id, 'duplicate_key', `offers service "${service.id}", which core provides`);
      const other = providers.get(service.id);
      if (other) throw new PluginRefusedError(plugin.id, 'duplicate_key', `service "${service.id}" is already offered by plugin "${other}"`);
      providers.set(service.id, plugin.id);
    }
  }
  return plugins.map((plugin) => {
    const needed = [plugin.parts.init.deps, ...plugin.parts.services.map((s) => s.deps)].flatMap((deps) => Object.values(deps).map((ref) => ref?.id));
    const from = needed.map((id) => providers.get(id)).filter((id): id is string => id !== undefined && id !== plugin.id);
    return { ...plugin, dependsOn: [...new Set([...plugin.dependsOn, ...from])] };
  });
}

/** The plugin's config section, validated by its schema; a refusal names each key. */
export function validatedConfig(plugin: AgentHostPlugin, raw: unknown): unknown {
  const parsed = plugin.config.safeParse(raw ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `[plugins.${plugin.id}]${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message}`);
    throw new PluginRefusedError(plugin.id, 'invalid_config', issues.join('; '));
  }
  return parsed.data;
}

function resolvedDeps(plugin: AgentHostPlugin, wanted: AnyDeps, resolve: (refId: string) => unknown): Record<string, unknown> {
  const deps: Record<string, unknown> = {};
  for (const [name, ref] of Object.entries(wanted)) {
    const value = ref && typeof ref.id === 'string' ? resolve(ref.id) : undefined;
    if (value === undefined) {
      throw new PluginRefusedError(
        plugin.id,
        'missing_dependency',
        `requires ${ref?.kind ?? 'service'} "${ref?.id ?? String(ref)}" (deps.${name}), which neither core nor any loaded plugin provides`,
      );
    }
    deps[name] = value;
  }
  return deps;
}

/** Builds the services a plugin offers, each from its resolved deps; what a factory throws refuses the plugin. */
export async function buildServices(
  plugin: AgentHostPlugin,
  parts: PluginParts,
  config: unknown,
  resolve: (refId: string) => unknown,
): Promise<Map<string, unknown>> {
  const built = new Map<string, unknown>();
  for (const { service, deps, factory } of parts.services) {
    const resolved = resolvedDeps(plugin, deps, (refId) => built.get(refId) ?? resolve(refId));
    try {
      built.set(service.id, await factory(resolved as never, config));
    } catch (error) {
      throw new PluginRefusedError(plugin.id, 'init_failed', `the factory of service "${service.id}" threw: ${(error as Error).message}`, { cause: error });
    }
  }
  return built;
}

/**
 * Resolves the init's deps through `resolve` (undefined: nobody provides it), runs it within `timeoutMs`, and wraps
 * what it throws. A missing dependency names the ref and the `deps` key that asked for it.
 */
export async function runInit(
  plugin: AgentHostPlugin,
  init: PluginInit<Record<string, DependencyRef>, unknown>,
  config: unknown,
  resolve: (refId: string) => unknown,
  timeoutMs: number,
): Promise<void> {
  const deps = resolvedDeps(plugin, init.deps, resolve);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const running = Promise.resolve().then(() => init.init(deps as never, config));
  // An init that goes on past its deadline is left behind: what it throws later must not end the process.
  running.catch(() => undefined);
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PluginRefusedError(plugin.id, 'init_failed', `init did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    await Promise.race([running, deadline]);
  } catch (error) {
    if (error instanceof PluginRefusedError) throw error;
    throw new PluginRefusedError(plugin.id, 'init_failed', `init threw: ${(error as Error).message}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** Marks a manifest list whose keys depend on the plugin's config (for example content types routed by config). */
export const CONFIG_DEPENDENT_KEYS = '*';

/**
 * The manifest is held to what `init` registered, so that `plugins list` and anything else reading manifests before
 * running code can trust them: registering into an undeclared extension point or under an undeclared key, or
 * declaring a key that was not registered, refuses the plugin.
 */
export function checkContributions(pluginId: string, declared: Partial<Record<string, string[]>>, registered: Record<string, string[]>): void {
  const problems: string[] = [];
  for (const point of new Set([...Object.keys(declared), ...Object.keys(registered)])) {
    const keys = declared[point] ?? [];
    const made = new Set(registered[point] ?? []);
    const undeclared = [...made].filter((key) => !keys.includes(key) && !keys.includes(CONFIG_DEPENDENT_KEYS));
    const missing = keys.filter((key) => key !== CONFIG_DEPENDENT_KEYS && !made.has(key));
    if (undeclared.length)
      problems.push(`registered ${point} ${undeclared.map((k) => `"${k}"`).join(', ')} that its manifest does not declare under "contributes"`);
    if (missing.length) problems.push(`declares ${point} ${missing.map((k) => `"${k}"`).join(', ')} in "contributes" but did not register them`);
  }
  if (problems.length) throw new PluginRefusedError(pluginId, 'invalid_plugin', problems.join('; '));
}

/** Runs a start (or other lifecycle) hook; what it throws refuses the plugin, naming the phase. */
export async function runLifecycleHook(pluginId: string, phase: string, hook: () => void | Promise<void>): Promise<void> {
  try {
    await hook();
  } catch (error) {
    throw new PluginRefusedError(pluginId, 'init_failed', `${phase} hook threw: ${(error as Error).message}`, { cause: error });
  }
}
