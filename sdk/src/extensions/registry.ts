/**
 * What a plugin sees of an extension point: it may add implementations under
 * keys. A key already claimed by another plugin refuses start-up with a
 * message naming both plugins.
 * @public
 */
export interface ExtensionRegistry<T> {
  register(key: string, implementation: T): void;
}
