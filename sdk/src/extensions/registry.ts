/** How a key is registered. @public */
export interface RegisterOptions {
  /**
   * A default that another plugin may replace: a plugin that registers the same key without this option takes it,
   * whichever of the two loads first, and this implementation serves the key only while none does. Two defaults of
   * one key still refuse start-up. First-party example: `models-langchain` offers `openai` as a default, which
   * `models-openai` replaces while it is enabled.
   */
  replaceable?: boolean;
}

/**
 * What a plugin sees of an extension point: it may add implementations under
 * keys. A key already claimed by another plugin refuses start-up with a
 * message naming both plugins, unless one of the two registered it as a
 * replaceable default ({@link RegisterOptions.replaceable}).
 * @public
 */
export interface ExtensionRegistry<T> {
  register(key: string, implementation: T, options?: RegisterOptions): void;
}
