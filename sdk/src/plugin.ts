import { z } from 'zod';
import type { DependencyRef, ExtensionPoint, ServiceRef } from './refs.js';

/** The SDK version this package implements; plugins declare a semver range against it. @public */
export const SDK_VERSION = '1.18.0';

/** Maps a `deps` object of refs to the instances `init` receives. @public */
export type ResolvedDeps<D extends Record<string, DependencyRef>> = {
  [K in keyof D]: D[K] extends ServiceRef<infer T> ? T : D[K] extends ExtensionPoint<infer T> ? T : never;
};

/** The one init a plugin registers: its deps by ref, and the function wiring them. @public */
export interface PluginInit<D extends Record<string, DependencyRef>, C> {
  deps: D;
  init(deps: ResolvedDeps<D>, config: C): void | Promise<void>;
}

/**
 * A service one plugin offers others: its ref, the deps its factory needs, and the factory. Since SDK 1.8.0.
 * @beta
 */
export interface PluginServiceFactory<T, D extends Record<string, DependencyRef>, C> {
  /** The ref other plugins list in their `deps`; create it with `createServiceRef` and export it from your package. */
  service: ServiceRef<T>;
  deps: D;
  /** Runs once, before the plugin's own `init`; the plugins that use the service initialise after this one. */
  factory(deps: ResolvedDeps<D>, config: C): T | Promise<T>;
}

/** What `register` receives. @public */
export interface PluginEnvironment<C> {
  /** Declares the plugin's dependencies and init; call exactly once. */
  registerInit<D extends Record<string, DependencyRef>>(options: PluginInit<D, C>): void;
  /**
   * Offers a service to other plugins (any number of calls, one per ref). A plugin that lists the ref in its `deps`
   * is initialised after this one; a ref offered twice, or a cycle of plugins needing each other's services, refuses
   * start-up naming the plugins. Since SDK 1.8.0.
   * @beta
   */
  registerService<T, D extends Record<string, DependencyRef>>(options: PluginServiceFactory<T, D, C>): void;
}

/** What a plugin author passes to {@link definePlugin}. @public */
export interface PluginOptions<S extends z.ZodType> {
  /** Unique kebab-case id; also the config section `[plugins.<id>]`. */
  id: string;
  /** Semver range of `@agent-host/sdk` the plugin was built against, for example `^1.0.0`. */
  sdk: string;
  /** Ids of plugins that must be loaded and initialised first. */
  dependsOn?: readonly string[];
  /** Schema of the plugin's config section; validated before `init` runs. */
  config?: S;
  register(env: PluginEnvironment<z.output<S>>): void;
}

/** A plugin as the kernel loads it (the default export of a plugin package). @public */
export interface AgentHostPlugin<C = unknown> {
  readonly $$type: '@agent-host/plugin';
  readonly id: string;
  readonly sdk: string;
  readonly dependsOn: readonly string[];
  readonly config: z.ZodType<C>;
  register(env: PluginEnvironment<C>): void;
}

const PLUGIN_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/**
 * Defines a plugin. Export the result as the default export of the package
 * named in its manifest.
 * @public
 */
export function definePlugin<S extends z.ZodType = z.ZodObject<Record<string, never>>>(options: PluginOptions<S>): AgentHostPlugin<z.output<S>> {
  if (!PLUGIN_ID.test(options.id)) {
    throw new TypeError(`plugin id "${options.id}" must be kebab-case`);
  }
  if (typeof options.sdk !== 'string' || options.sdk.trim() === '') {
    throw new TypeError(`plugin "${options.id}" must declare the SDK range it was built against`);
  }
  return Object.freeze({
    $$type: '@agent-host/plugin' as const,
    id: options.id,
    sdk: options.sdk,
    dependsOn: Object.freeze([...(options.dependsOn ?? [])]),
    config: (options.config ?? z.object({}).strict()) as unknown as z.ZodType<z.output<S>>,
    register: options.register,
  });
}

/** True when `value` was produced by {@link definePlugin}. @public */
export function isAgentHostPlugin(value: unknown): value is AgentHostPlugin {
  return typeof value === 'object' && value !== null && (value as { $$type?: unknown }).$$type === '@agent-host/plugin';
}
