import { extensionPoints, type ExtensionPoint, type ExtensionRegistry } from '@agent-host/sdk';
import { configSchema, type HostConfig } from './schema.js';

/** What the loaded plugins provide: their ids, and per extension point its name and the keys registered in it. */
export interface LoadedExtensions {
  pluginIds: readonly string[];
  registered(point: ExtensionPoint<ExtensionRegistry<unknown>>): { name: string; keys: readonly string[] };
}

// Keys of the [plugins] table that are settings, not plugin sections.
const PLUGIN_SETTINGS = new Set(Object.keys(configSchema.shape.plugins.shape));

/**
 * Configuration that names something no loaded plugin provides: a typo in `[plugins] disabled`, a section for a
 * plugin that is not loaded, or a reference to an extension no enabled plugin registers. Each problem names the key
 * and the fix; the host warns in development and refuses to start in production.
 */
export function unresolvedReferences(config: HostConfig, loaded: LoadedExtensions, specifiers: readonly string[]): string[] {
  const problems: string[] = [];
  const ids = new Set(loaded.pluginIds);
  for (const id of config.plugins.disabled) {
    if (!ids.has(id) && !specifiers.includes(id))
      problems.push(
        `[plugins] disabled names "${id}", which no enabled plugin is: it disables nothing (check the spelling; loaded: ${[...ids].join(', ') || 'none'})`,
      );
  }
  for (const section of Object.keys(config.plugins)) {
    if (!PLUGIN_SETTINGS.has(section) && !ids.has(section))
      problems.push(`[plugins.${section}] configures a plugin that is not loaded: enable it, or remove the section`);
  }
  const need = (point: ExtensionPoint<ExtensionRegistry<unknown>>, key: string, setting: string) => {
    const { name, keys } = loaded.registered(point);
    if (!keys.includes(key))
      problems.push(
        `${setting} = "${key}", but no enabled plugin registers ${name} "${key}" (registered: ${keys.join(', ') || 'none'}): enable the plugin that provides it, or change the setting`,
      );
  };
  need(extensionPoints.embedders, config.knowledge.embedder, '[knowledge] embedder');
  need(extensionPoints.retrievers, config.knowledge.retriever, '[knowledge] retriever');
  need(extensionPoints.orchestrators, config.agent.default_orchestrator_key, '[agent] default_orchestrator_key');
  const providers = loaded.registered(extensionPoints.modelProviders).keys;
  for (const provider of new Set([config.models.default_model_provider, ...config.models.catalog.map((m) => m.model_provider)])) {
    if (!providers.includes(provider))
      problems.push(
        `[models] names model_provider "${provider}", but no enabled plugin registers it (registered: ${providers.join(', ') || 'none'}): enable the plugin that provides it, or remove its models`,
      );
  }
  return problems;
}
