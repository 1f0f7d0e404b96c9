/**
 * A typed reference to a service the kernel provides. Plugins list refs in
 * `deps`; the kernel resolves each to an instance of `T`.
 * @public
 */
export interface ServiceRef<T> {
  /** Unique id, for example `core.logger`. */
  readonly id: string;
  readonly kind: 'service';
  /** Phantom field carrying the service type; never set at run time. */
  readonly $type?: T;
}

/**
 * A typed reference to an extension point: a keyed registry that plugins
 * contribute implementations to (orchestrators, tool backends, ...).
 * @public
 */
export interface ExtensionPoint<T> {
  /** Unique id, for example `core.orchestrators`. */
  readonly id: string;
  readonly kind: 'extension-point';
  /** Phantom field carrying the registry type; never set at run time. */
  readonly $type?: T;
}

/** Any ref a plugin may list in `deps`. @public */
export type DependencyRef = ServiceRef<unknown> | ExtensionPoint<unknown>;

/** Creates a service ref. Ids are global: prefix them with your plugin id. @public */
export function createServiceRef<T>(options: { id: string }): ServiceRef<T> {
  return Object.freeze({ id: options.id, kind: 'service' as const });
}

/** Creates an extension point ref. @public */
export function createExtensionPoint<T>(options: { id: string }): ExtensionPoint<T> {
  return Object.freeze({ id: options.id, kind: 'extension-point' as const });
}
