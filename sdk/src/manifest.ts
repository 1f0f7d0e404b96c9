/**
 * The manifest in a plugin's `package.json` under the key `agentHost`. The
 * host reads it before importing any plugin code, so it can list and check
 * plugins (id, SDK range, contributions) without running them.
 * @public
 */
export interface PluginManifest {
  /** Must equal the `id` given to `definePlugin`. */
  id: string;
  /** Semver range of `@agent-host/sdk`; must equal the one given to `definePlugin`. */
  sdk: string;
  /** Human-readable summary for `agent-host plugins list`. */
  description?: string;
  /**
   * What the plugin registers, by extension point name, for listing before load. The kernel refuses a plugin whose
   * `init` registers anything not listed here, or does not register a listed key; `"*"` in a list allows keys that
   * depend on the plugin's config.
   */
  contributes?: Partial<Record<string, string[]>>;
}
