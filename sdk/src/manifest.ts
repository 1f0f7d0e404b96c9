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
  /** What the plugin registers, by extension point name, for listing before load. */
  contributes?: Partial<Record<string, string[]>>;
}
